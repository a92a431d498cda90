package redis

import "testing"

// TestSentinelConformance runs the engine suite through Redis Sentinel
// (scripts/services.sh runs a master, a replica and three Sentinels), with
// MinReplicas as docs/engines.md recommends there: publications with
// history reach subscribers only once replicated, through a second
// PUBLISH, which the suite's ordering and recovery tests then cover.
func TestSentinelConformance(t *testing.T) {
	opts := sentinelOptions(t)
	opts.MinReplicas = 1
	runConformance(t, opts)
}
