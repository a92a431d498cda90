package memory

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/enginetest"
)

// TestMapKeysExpiringTogetherRemovedInTime: 30,000 keys of one channel
// (one shard; 3,000 under the race detector: enginetest.MapExpiryScale)
// expire together and every removal is delivered within a second of
// their expiry, with the engine's default janitor. Before, one shard
// removed 1,000 keys a second: the last came 30 s late. Measured at a
// load of 8 on the shared 2-core machine: the last 0.12 s late.
func TestMapKeysExpiringTogetherRemovedInTime(t *testing.T) {
	const keys = enginetest.MapExpiryScale
	lag := enginetest.MapKeysExpiringTogether(t, New(Config{}), "m", keys, 100*time.Microsecond, 20*time.Second)
	t.Log(lag)
	if lag.Max > time.Second {
		t.Fatalf("the last removal came %s after its key expired, want at most %s", lag.Max, time.Second)
	}
}
