package postgres

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/enginetest"
)

// TestMapKeysExpiringTogetherRemovedInTime: 3,000 keys of one channel
// expire together and every removal is delivered, with the engine's
// default janitor interval, as fast as the database removes them. Before,
// map keys shared the janitor's once-a-second tick and its ten statements
// of 200: 2,000 a second at most. What bounds it now is expire_map_keys
// itself, each key a change in its stream (about 1,000 a second on the
// shared 2-core test machine, so the bound below is loose).
func TestMapKeysExpiringTogetherRemovedInTime(t *testing.T) {
	dsn := testDSN(t)
	opts := testOptions(dsn, testSchema(t, dsn))
	opts.JanitorInterval = 0 // the default
	const keys = 3000
	lag := enginetest.MapKeysExpiringTogether(t, newEngine(t, opts), "expiry:"+randomToken(4), keys, 5*time.Millisecond, 30*time.Second)
	t.Logf("%d keys expiring together: the last removal came %s after their expiry", keys, lag)
	if lag > 10*time.Second {
		t.Fatalf("the last removal came %s after the keys expired, want at most 10s", lag)
	}
}
