package sharded

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestMapKeysExpiringTogetherRemovedInTime: 30,000 keys of a channel
// (3,000 under the race detector) on a Redis engine sharded in two expire
// together, and every removal reaches the sharded engine's handler soon
// after its key's expiry: the shard's own expiry (engine/redis's test of
// the same name), through the sharded engine's delivery.
func TestMapKeysExpiringTogetherRemovedInTime(t *testing.T) {
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	cfgs := redisConfigs(t, addr, addr)
	e, err := newRedis(context.Background(), cfgs)
	if err != nil {
		t.Fatalf("new sharded engine: %v", err)
	}
	const keys = enginetest.MapExpiryScale
	lag := enginetest.MapKeysExpiringTogether(t, WithMaps(e), channelOn(t, 2, 1, "expiry"), keys, 300*time.Microsecond, 60*time.Second)
	t.Log(lag)
	if lag.Max > 3*time.Second {
		t.Fatalf("the last removal came %s after its key expired, want at most %s", lag.Max, 3*time.Second)
	}
}
