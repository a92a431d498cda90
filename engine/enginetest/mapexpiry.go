package enginetest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// removals records when each map key's removal is delivered.
type removals struct {
	mu   sync.Mutex
	at   map[string]time.Time
	want int
	all  chan struct{} // closed once want removals arrived
}

func (r *removals) HandlePublication(_ string, pub *engine.Publication, _ engine.StreamPosition) {
	if !pub.Removed {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.at[pub.Key]; seen {
		return
	}
	r.at[pub.Key] = time.Now()
	if len(r.at) == r.want {
		close(r.all)
	}
}
func (r *removals) HandleJoin(string, *engine.ClientInfo)  {}
func (r *removals) HandleLeave(string, *engine.ClientInfo) {}
func (r *removals) HandleControl([]byte)                   {}

// MapKeysExpiringTogether starts b, which must not be started yet, with a
// handler of its own, publishes n keys of channel ch (perKey is the
// longest a publish may take) whose TTLs all end at one moment, waits for every removal (at most within), and returns how long
// after that moment the last one was delivered. Engines remove expired
// keys in batches; this is what a batch bound costs when many expire at
// once (issue: 30,000 keys removed up to 30 s late).
func MapKeysExpiringTogether(t *testing.T, b engine.Engine, ch string, n int, perKey, within time.Duration) time.Duration {
	t.Helper()
	ctx := context.Background()
	r := &removals{at: make(map[string]time.Time, n), want: n, all: make(chan struct{})}
	if err := b.Start(ctx, r); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if err := b.Subscribe(ctx, ch); err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	mb, ok := engine.MapsOf(b)
	if !ok {
		t.Fatalf("%T has no map state", b)
	}
	// Publishing n keys takes a while (perKey each, at most): each key's
	// TTL ends at the same moment, after the last publish.
	end := time.Now().Add(500*time.Millisecond + time.Duration(n)*perKey)
	// Eight publishers, as many clients would: one at a time, a database
	// takes too long for the keys to expire together.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				ttl := time.Until(end)
				if ttl <= 0 {
					errs <- fmt.Errorf("publishing %d keys took past their expiry", n)
					return
				}
				opts := engine.MapPublishOptions{StreamSize: 10, StreamTTL: time.Minute, KeyTTL: ttl}
				if _, err := mb.MapPublish(ctx, ch, &engine.Publication{Key: strconv.Itoa(i), Data: []byte(`1`)}, opts); err != nil {
					errs <- fmt.Errorf("MapPublish: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.all:
	case <-time.After(time.Until(end) + within):
		r.mu.Lock()
		defer r.mu.Unlock()
		t.Fatalf("%d of %d removals within %s of their expiry", len(r.at), n, within)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var last time.Time
	for _, at := range r.at {
		if at.After(last) {
			last = at
		}
	}
	return last.Sub(end)
}
