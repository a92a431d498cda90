package redis

import (
	"context"
	"fmt"
	"time"
)

// The node registry is a sorted set of node ids scored by when each stops
// counting as alive. Nodes refresh their entry every HeartbeatInterval and
// remove it on Close; a node that died drops out after NodeTTL.

// heartbeat records this node as alive for NodeTTL more.
func (e *Engine) heartbeat(ctx context.Context) error {
	err := heartbeatScript.Run(ctx, e.client, []string{e.keys.nodes}, e.opts.NodeID, millis(e.opts.NodeTTL)).Err()
	if err != nil {
		return fmt.Errorf("node heartbeat: %w", err)
	}
	return nil
}

func (e *Engine) runHeartbeat() {
	t := time.NewTicker(e.opts.HeartbeatInterval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-e.closing:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(e.bgCtx, e.opts.HeartbeatInterval)
		err := e.heartbeat(ctx)
		cancel()
		switch {
		case err != nil && !failing:
			failing = true
			e.log.Warn("node heartbeat failed", "error", err)
		case err == nil && failing:
			failing = false
			e.log.Info("node heartbeat works again")
		}
	}
}

// Nodes lists the ids of the live nodes, this one included once started.
func (e *Engine) Nodes(ctx context.Context) ([]string, error) {
	if err := e.life.Usable(ctx); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	ids, err := nodesScript.Run(ctx, e.client, []string{e.keys.nodes}).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return ids, nil
}
