package redis

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testenv"
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

// TestRateLimiterAlone: a RateLimiter of its own draws from the buckets
// an engine with the same prefix keeps, and answers an error, not a
// verdict, when its Redis cannot be reached.
func TestRateLimiterAlone(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	e := startEngine(t, opts, enginetest.NewRecorder())
	rl, err := NewRateLimiter(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rl.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	buckets := []engine.RateBucket{{Interval: time.Hour, Rate: 2}}
	for i, l := range []engine.RateLimiter{rl, e} {
		if ok, err := l.TakeRate(ctx, "user:u", buckets); err != nil || !ok {
			t.Fatalf("operation %d: %v %v", i, ok, err)
		}
	}
	if ok, err := rl.TakeRate(ctx, "user:u", buckets); err != nil || ok {
		t.Fatalf("a third operation: %v %v, want refused", ok, err)
	}

	dead := opts
	dead.Addrs = []string{"127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))}
	down, err := NewRateLimiter(dead)
	if err != nil {
		t.Fatalf("a limiter must start without its Redis: %v", err)
	}
	t.Cleanup(func() { _ = down.Close() })
	if _, err := down.TakeRate(ctx, "user:u", buckets); err == nil {
		t.Fatal("no error from a Redis that is not there")
	}
	if _, err := NewRateLimiter(Config{}); err == nil {
		t.Fatal("no error without an address")
	}
}
