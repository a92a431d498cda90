package memory

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// removalHandler records when each map key's removal is delivered.
type removalHandler struct {
	mu      sync.Mutex
	removed map[string]time.Time
	all     chan struct{} // closed when want removals arrived
	want    int
}

func (h *removalHandler) HandlePublication(_ string, pub *engine.Publication, _ engine.StreamPosition) {
	if !pub.Removed {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removed[pub.Key] = time.Now()
	if len(h.removed) == h.want {
		close(h.all)
	}
}
func (h *removalHandler) HandleJoin(string, *engine.ClientInfo)  {}
func (h *removalHandler) HandleLeave(string, *engine.ClientInfo) {}
func (h *removalHandler) HandleControl([]byte)                   {}

// TestMapKeysExpiringTogetherRemovedInTime: 3,000 keys of one channel (one
// shard) expire together and each removal is delivered within a second of
// its expiry, with the engine's default janitor. Before, one shard
// removed 1,000 keys a second: the last came 2 s late.
func TestMapKeysExpiringTogetherRemovedInTime(t *testing.T) {
	const keys = 3000
	h := &removalHandler{removed: map[string]time.Time{}, all: make(chan struct{}), want: keys}
	e := New(Config{})
	if err := e.Start(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	const ttl = 300 * time.Millisecond
	opts := engine.MapPublishOptions{StreamSize: 10, StreamTTL: time.Minute, KeyTTL: ttl}
	expiry := make(map[string]time.Time, keys)
	for i := range keys {
		k := strconv.Itoa(i)
		if _, err := e.MapPublish(context.Background(), "m", &engine.Publication{Key: k, Data: []byte(`1`)}, opts); err != nil {
			t.Fatal(err)
		}
		expiry[k] = time.Now().Add(ttl)
	}
	select {
	case <-h.all:
	case <-time.After(20 * time.Second):
		t.Fatalf("%d of %d removals after 20s", len(h.removed), keys)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var worst time.Duration
	for k, at := range h.removed {
		worst = max(worst, at.Sub(expiry[k]))
	}
	t.Logf("%d keys expiring together: the latest removal came %s after its expiry", keys, worst)
	if worst > time.Second {
		t.Fatalf("a removal came %s after its key expired, want at most 1s", worst)
	}
}
