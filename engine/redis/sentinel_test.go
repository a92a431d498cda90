package redis

import "testing"

// TestSentinelConformance runs the engine suite through Redis Sentinel
// (scripts/services.sh runs a master, a replica and three Sentinels).
func TestSentinelConformance(t *testing.T) {
	runConformance(t, sentinelOptions(t))
}
