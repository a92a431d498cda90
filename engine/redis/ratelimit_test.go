package redis

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
)

// TestTakeRate: two engines (two nodes) draw from one set of buckets per
// key, all buckets or none; other keys are not affected.
func TestTakeRate(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	a := startEngine(t, opts, enginetest.NewRecorder())
	b := startEngine(t, opts, enginetest.NewRecorder())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	buckets := []engine.RateBucket{{Interval: time.Hour, Rate: 3}, {Interval: 2 * time.Hour, Rate: 2}}
	take := func(e *Engine, key string) bool {
		t.Helper()
		ok, err := e.TakeRate(ctx, key, buckets)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !take(a, "user:u") || !take(b, "user:u") {
		t.Fatal("the first two operations, one on each node, refused")
	}
	// The second bucket (2 per 2h) is empty; the first (3 per 1h) must
	// not have given its token for the refused one.
	if take(a, "user:u") || take(b, "user:u") {
		t.Fatal("a third operation passed the 2-per-2h bucket")
	}
	if !take(b, "user:v") {
		t.Fatal("another key shares the buckets")
	}
	if ok, err := a.TakeRate(ctx, "user:u", nil); err != nil || !ok {
		t.Fatalf("no buckets: %v %v", ok, err)
	}
}
