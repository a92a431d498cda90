package redis

import (
	"context"
	"fmt"
	"strings"
)

// Deployment names the keys and pub/sub channels the engine uses: the
// run_id of the server it talks to (through Sentinel, the master of the
// moment) and its key prefix. Two engines with the same deployment share
// their streams and control channels (pub/sub ignores the database
// number), so a sharded engine must not take both as shards. It is empty
// for a Redis Cluster, whose data no single run_id names.
func (e *Engine) Deployment(ctx context.Context) (string, error) {
	if e.cluster {
		return "", nil
	}
	info, err := e.client.Info(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("redis engine: INFO server: %w", err)
	}
	for line := range strings.Lines(info) {
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return id + " " + e.opts.Prefix, nil
		}
	}
	return "", fmt.Errorf("redis engine: INFO server has no run_id")
}
