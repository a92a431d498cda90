package memory

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/enginetest"
)

// TestMapKeysExpiringTogetherRemovedInTime: 3,000 keys of one channel (one
// shard) expire together and every removal is delivered within a second
// of their expiry, with the engine's default janitor. Before, one shard
// removed 1,000 keys a second: the last came 2 s late.
func TestMapKeysExpiringTogetherRemovedInTime(t *testing.T) {
	const keys = 3000
	lag := enginetest.MapKeysExpiringTogether(t, New(Config{}), "m", keys, 100*time.Microsecond, 20*time.Second)
	t.Logf("%d keys expiring together: the last removal came %s after their expiry", keys, lag)
	if lag > time.Second {
		t.Fatalf("the last removal came %s after the keys expired, want at most 1s", lag)
	}
}
