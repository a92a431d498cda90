package nats

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
)

// BenchmarkPublishDeliver measures a publish and its delivery to another
// node, one at a time.
func BenchmarkPublishDeliver(b *testing.B) {
	opts := testOptions(b)
	pubNode := startEngine(b, opts, enginetest.NewRecorder())
	rec := enginetest.NewRecorder()
	subNode := startEngine(b, opts, rec)
	ch := "bench_" + randomToken(4)
	if err := subNode.Subscribe(b.Context(), ch); err != nil {
		b.Fatal(err)
	}
	pub := &engine.Publication{Data: []byte(`{"text":"a typical chat message of some length"}`)}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if _, err := pubNode.Publish(b.Context(), ch, pub, engine.PublishOptions{}); err != nil {
			b.Fatal(err)
		}
		n++
		rec.WaitForPublicationCount(b, ch, n, 10*time.Second)
	}
}

// BenchmarkPublish measures publishing alone (NATS buffers and batches).
func BenchmarkPublish(b *testing.B) {
	e := startEngine(b, testOptions(b), enginetest.NewRecorder())
	pub := &engine.Publication{Data: []byte(`{"text":"a typical chat message of some length"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Publish(b.Context(), "bench", pub, engine.PublishOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
