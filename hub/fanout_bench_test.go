package hub_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// countingTransport stands in for a socket: it counts frames, so the
// benchmark measures the hub's own cost of a delivery, not the kernel's.
type countingTransport struct {
	frames *atomic.Int64
	wg     *sync.WaitGroup
	armed  atomic.Bool
}

func (t *countingTransport) Protocol() protocol.Type { return protocol.TypeJSON }
func (t *countingTransport) WriteFrame(frame []byte) error {
	t.frames.Add(1)
	if t.armed.CompareAndSwap(true, false) {
		t.wg.Done()
	}
	return nil
}
func (t *countingTransport) Close(uint32, string) {}

// BenchmarkFanout publishes to one channel with 10,000 subscribers and
// waits until every subscriber's writer has taken the publication.
func BenchmarkFanout(b *testing.B) {
	h, err := hub.New(hub.Config{
		Engine: memory.New(memory.Config{}),
		Client: hub.ClientConfig{Insecure: true},
		Logger: testLogger(),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer h.Shutdown(context.Background())
	const subs = 10000
	var frames atomic.Int64
	var wg sync.WaitGroup
	ts := make([]*countingTransport, subs)
	for i := range ts {
		ts[i] = &countingTransport{frames: &frames, wg: &wg}
		c := h.NewClient(ts[i], "bench")
		c.HandleFrame([]byte(`{"id":1,"connect":{}}` + "\n" + `{"id":2,"subscribe":{"channel":"fan"}}`))
	}
	data := []byte(`{"text":"a 128-byte publication, roughly, which is what the PostgreSignalR workload sends to every subscriber....."}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wg.Add(subs)
		for _, t := range ts {
			t.armed.Store(true)
		}
		if _, err := h.Publish(context.Background(), "fan", data, hub.PublishOptions{}); err != nil {
			b.Fatal(err)
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*subs), "ns/delivery")
}
