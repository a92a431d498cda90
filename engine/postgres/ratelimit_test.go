package postgres

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
)

// TestTakeRate: two engines (two nodes) draw from one set of buckets per
// key, all or none, also when they take at once; other keys are apart.
func TestTakeRate(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a := startEngine(t, testOptions(dsn, schema), enginetest.NewRecorder())
	b := startEngine(t, testOptions(dsn, schema), enginetest.NewRecorder())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	buckets := []engine.RateBucket{{Interval: time.Hour, Rate: 8}, {Interval: 2 * time.Hour, Rate: 5}}
	// Ten at once over both nodes: the 5-per-2h bucket lets exactly five
	// through, however the row locks order them.
	var mu sync.Mutex
	allowed := 0
	var wg sync.WaitGroup
	for i := range 10 {
		e := a
		if i%2 == 1 {
			e = b
		}
		wg.Go(func() {
			ok, err := e.TakeRate(ctx, "user:u", buckets)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if allowed != 5 {
		t.Fatalf("%d of 10 allowed, want 5", allowed)
	}
	if ok, err := b.TakeRate(ctx, "user:v", buckets); err != nil || !ok {
		t.Fatalf("another key: %v %v", ok, err)
	}
}

// TestTakeGCRA: the arithmetic of one key's buckets.
func TestTakeGCRA(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	buckets := []engine.RateBucket{{Interval: time.Second, Rate: 2}}
	v, _, ok := takeGCRA(nil, buckets, now)
	if !ok {
		t.Fatal("first refused")
	}
	v, _, ok = takeGCRA(v, buckets, now)
	if !ok {
		t.Fatal("second refused")
	}
	if _, _, ok = takeGCRA(v, buckets, now); ok {
		t.Fatal("third in the same instant allowed")
	}
	if _, _, ok = takeGCRA(v, buckets, now.Add(500*time.Millisecond)); !ok {
		t.Fatal("half an interval later one token is back")
	}
}
