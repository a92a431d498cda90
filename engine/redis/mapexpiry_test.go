package redis

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/enginetest"
)

// TestMapKeysExpiringTogetherRemovedInTime: 3,000 keys of one channel
// expire together and every removal is delivered within a second of their
// expiry, with the engine's default expiry interval. Before, one tick a
// second removed at most 100 keys of a channel, one round trip each: the
// last came 29 s late.
func TestMapKeysExpiringTogetherRemovedInTime(t *testing.T) {
	const keys = 3000
	lag := enginetest.MapKeysExpiringTogether(t, newTestEngine(t, testOptions(t)), "expiry:"+randomToken(4), keys, 3*time.Millisecond, 60*time.Second)
	t.Logf("%d keys expiring together: the last removal came %s after their expiry", keys, lag)
	if lag > time.Second {
		t.Fatalf("the last removal came %s after the keys expired, want at most 1s", lag)
	}
}
