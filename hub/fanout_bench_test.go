package hub_test

import (
	"context"
	"fmt"
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
	benchFanout(b, func(int) string { return "" }, nil)
}

// BenchmarkFanoutFiltered: 10,000 subscribers with tags filters that
// 10% of them pass, in 10 distinct filters (subscribers interested in one
// of 10 groups): each distinct filter is evaluated once per publication.
func BenchmarkFanoutFiltered(b *testing.B) {
	benchFanout(b, func(i int) string {
		return fmt.Sprintf(`,"tf":{"key":"group","cmp":"eq","val":"g%d"}`, i%10)
	}, map[string]string{"group": "g0"})
}

// BenchmarkFanoutFilteredDistinct: the same 10% pass, but every
// subscriber's filter is its own (it also excludes one id), so none is
// shared: the worst case, one evaluation per subscriber.
func BenchmarkFanoutFilteredDistinct(b *testing.B) {
	benchFanout(b, func(i int) string {
		return fmt.Sprintf(`,"tf":{"op":"and","nodes":[{"key":"group","cmp":"eq","val":"g%d"},{"key":"id","cmp":"neq","val":"%d"}]}`, i%10, i)
	}, map[string]string{"group": "g0", "id": "none"})
}

// benchFanout subscribes 10,000 clients to one channel, subscriber i with
// the subscribe request fields filter(i), publishes with tags and waits
// until every subscriber that passes its filter (subscriber i passes when
// i%10 == 0, or every one without tags) has taken the publication.
func benchFanout(b *testing.B, filter func(i int) string, tags map[string]string) {
	h, err := hub.New(hub.Config{
		Engine:   memory.New(memory.Config{}),
		Client:   hub.ClientConfig{Insecure: true},
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{AllowTagsFilter: true}},
		Logger:   testLogger(),
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
	var receivers []*countingTransport
	for i := range ts {
		ts[i] = &countingTransport{frames: &frames, wg: &wg}
		c := h.NewClient(ts[i], "bench")
		c.HandleFrame([]byte(`{"id":1,"connect":{}}` + "\n" + `{"id":2,"subscribe":{"channel":"fan"` + filter(i) + `}}`))
		if tags == nil || i%10 == 0 {
			receivers = append(receivers, ts[i])
		}
	}
	data := []byte(`{"text":"a 128-byte publication, roughly, which is what the PostgreSignalR workload sends to every subscriber....."}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wg.Add(len(receivers))
		for _, t := range receivers {
			t.armed.Store(true)
		}
		if _, err := h.Publish(context.Background(), "fan", data, hub.PublishOptions{Tags: tags}); err != nil {
			b.Fatal(err)
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*subs), "ns/subscriber")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(receivers)), "ns/delivery")
}
