package redis

import "testing"

// TestClusterConformance runs the engine suite on a Redis Cluster of three
// masters (scripts/services.sh starts it): a channel's keys live in the
// slot of its hash tag, and pub/sub reaches every node through the
// cluster bus.
func TestClusterConformance(t *testing.T) {
	runConformance(t, clusterOptions(t))
}
