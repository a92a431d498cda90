package redis

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/engine/internal/wire"
)

func BenchmarkParseMessage(b *testing.B) {
	payload := "h42:epochX:" + string(wire.AppendPublication(nil, enginetest.SamplePublication()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseMessage(payload); err != nil {
			b.Fatal(err)
		}
	}
}

// benchmarkPublish measures a publish and its delivery to a subscriber
// on the same node, one at a time (round-trip latency, not throughput).
func benchmarkPublish(b *testing.B, opts engine.PublishOptions) {
	rec := enginetest.NewRecorder()
	e := startEngine(b, testOptions(b), rec)
	ch := "bench_" + randomToken(4)
	if err := e.Subscribe(b.Context(), ch); err != nil {
		b.Fatal(err)
	}
	pub := &engine.Publication{Data: []byte(`{"text":"a typical chat message of some length"}`)}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if _, err := e.Publish(b.Context(), ch, pub, opts); err != nil {
			b.Fatal(err)
		}
		n++
	}
	rec.WaitForPublications(b, ch, n, time.Minute)
}

func BenchmarkPublishHistory(b *testing.B) {
	benchmarkPublish(b, engine.PublishOptions{HistorySize: 100, HistoryTTL: time.Minute})
}

func BenchmarkPublishNoHistory(b *testing.B) {
	benchmarkPublish(b, engine.PublishOptions{})
}

// BenchmarkPublishParallel measures throughput with concurrent publishers
// on distinct channels with history.
func BenchmarkPublishParallel(b *testing.B) {
	e := startEngine(b, testOptions(b), enginetest.NewRecorder())
	opts := engine.PublishOptions{HistorySize: 100, HistoryTTL: time.Minute}
	pub := &engine.Publication{Data: []byte(`{"text":"a typical chat message of some length"}`)}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ch := "bench_" + randomToken(4)
		for pb.Next() {
			if _, err := e.Publish(b.Context(), ch, pub, opts); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
