package memory

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// nopHandler stands in for the hub, whose handler does not block.
type nopHandler struct{}

func (nopHandler) HandlePublication(string, *engine.Publication, engine.StreamPosition) {}
func (nopHandler) HandleJoin(string, *engine.ClientInfo)                                {}
func (nopHandler) HandleLeave(string, *engine.ClientInfo)                               {}
func (nopHandler) HandleControl([]byte)                                                 {}

func benchEngine(b *testing.B) *Engine {
	e := New(Config{})
	if err := e.Start(context.Background(), nopHandler{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	return e
}

var benchOpts = engine.PublishOptions{HistorySize: 100, HistoryTTL: time.Minute}

func BenchmarkPublishHistoryOneChannel(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	pub := &engine.Publication{Data: []byte(`{"text":"hello"}`)}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.Publish(ctx, "chat", pub, benchOpts); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkPublishHistoryManyChannels(b *testing.B) {
	const channels = 10000
	e := benchEngine(b)
	ctx := context.Background()
	names := make([]string, channels)
	for i := range names {
		names[i] = "chat:" + strconv.Itoa(i)
	}
	pub := &engine.Publication{Data: []byte(`{"text":"hello"}`)}
	var next atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := next.Add(7919) // spread goroutines over the channels
		for pb.Next() {
			i++
			if _, err := e.Publish(ctx, names[i%channels], pub, benchOpts); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkHistoryRead100Of1000(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	opts := engine.PublishOptions{HistorySize: 1000, HistoryTTL: time.Hour}
	pub := &engine.Publication{Data: []byte(`{"text":"hello"}`)}
	for range 1000 {
		if _, err := e.Publish(ctx, "chat", pub, opts); err != nil {
			b.Fatal(err)
		}
	}
	req := engine.HistoryRequest{Since: &engine.StreamPosition{Offset: 450}, Limit: 100}
	b.ReportAllocs()
	for b.Loop() {
		pubs, _, err := e.History(ctx, "chat", req)
		if err != nil || len(pubs) != 100 {
			b.Fatalf("History: %d publications, %v", len(pubs), err)
		}
	}
}
