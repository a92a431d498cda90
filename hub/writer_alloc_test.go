package hub_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"sync/atomic"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// pubCounter is a transport that counts the publications written to it and tells done
// when the shared count reaches its target.
type pubCounter struct {
	total  *atomic.Int64
	target *atomic.Int64
	done   chan struct{}
}

func (t *pubCounter) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *pubCounter) WriteFrame(frame []byte) error {
	n := int64(bytes.Count(frame, []byte(`"pub"`)))
	if n > 0 && t.total.Add(n) == t.target.Load() {
		t.done <- struct{}{}
	}
	return nil
}

func (t *pubCounter) Close(uint32, string) {}

// TestFanOutAllocations: delivering a publication to many subscribers
// allocates per publication, not per subscriber. Each flush used to start
// its client's queue in a new slice, which was 90% of a busy node's
// allocation and set its GC's pace.
func TestFanOutAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocates")
	}
	h := startNodeMem(t, anonymousConfig(hub.ClientConfig{WriteCoalesceOff: true})).hub
	const subscribers = 200
	var total, target atomic.Int64
	done := make(chan struct{}, 1)
	for range subscribers {
		c := h.NewClient(&pubCounter{total: &total, target: &target, done: done}, "127.0.0.1:1")
		c.HandleFrame([]byte(`{"id":1,"connect":{}}`))
		c.HandleFrame([]byte(`{"id":2,"subscribe":{"channel":"s"}}`))
		t.Cleanup(c.HandleClose)
	}
	for h.NumSubscriptions() < subscribers {
		time.Sleep(time.Millisecond) // the subscribe commands run on the clients' goroutines
	}
	ctx := context.Background()
	data := []byte(`{"v":1}`)
	publish := func() {
		target.Add(subscribers)
		if _, err := h.Publish(ctx, "s", data, hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d copies written", total.Load(), target.Load())
		}
	}
	for range 20 {
		publish() // warm the pools
	}
	allocs := testing.AllocsPerRun(50, publish)
	t.Logf("%.1f allocations per publication to %d subscribers", allocs, subscribers)
	if allocs > subscribers/4 {
		t.Fatalf("%.1f allocations per publication to %d subscribers: something allocates per subscriber", allocs, subscribers)
	}
}
