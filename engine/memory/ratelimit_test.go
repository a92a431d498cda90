package memory

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// TestTakeRate: a key's buckets give all their tokens or none; other
// keys are apart; a full bucket is forgotten by the sweep.
func TestTakeRate(t *testing.T) {
	t.Parallel()
	e := New(Config{})
	ctx := context.Background()
	buckets := []engine.RateBucket{{Interval: time.Hour, Rate: 3}, {Interval: 2 * time.Hour, Rate: 2}}
	take := func(key string) bool {
		ok, err := e.TakeRate(ctx, key, buckets)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !take("u") || !take("u") {
		t.Fatal("the first two operations refused")
	}
	if take("u") {
		t.Fatal("a third operation passed the 2-per-2h bucket")
	}
	if !take("v") {
		t.Fatal("another key shares the buckets")
	}
	if ok, err := e.TakeRate(ctx, "u", nil); err != nil || !ok {
		t.Fatalf("no buckets: %v %v", ok, err)
	}
}
