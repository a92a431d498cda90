package tracing_test

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/tracing"
)

// TestEngineSpans: each traced round trip is a span under the caller's,
// with the channel; a failing one records its error.
func TestEngineSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mem := memory.New(memory.Config{})
	e := tracing.WrapEngine(mem, tp)
	ctx := context.Background()
	if err := e.Start(ctx, nopHandler{}); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, parent := tp.Tracer("test").Start(ctx, "request")
	opts := engine.PublishOptions{HistorySize: 10, HistoryTTL: time.Minute}
	if _, err := e.Publish(ctx, "ch", &engine.Publication{Data: []byte(`{}`)}, opts); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.History(ctx, "ch", engine.HistoryRequest{Limit: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Presence(ctx, "ch"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PresenceStats(ctx, "ch"); err != nil {
		t.Fatal(err)
	}
	if err := e.RemoveHistory(ctx, "ch"); err != nil {
		t.Fatal(err)
	}
	parent.End()
	want := []string{"engine.Publish", "engine.History", "engine.Presence", "engine.PresenceStats", "engine.RemoveHistory"}
	ended := rec.Ended()
	if len(ended) != len(want)+1 {
		t.Fatalf("%d spans ended, want %d", len(ended), len(want)+1)
	}
	for i, name := range want {
		s := ended[i]
		if s.Name() != name {
			t.Errorf("span %d is %q, want %q", i, s.Name(), name)
		}
		if s.Parent().SpanID() != parent.SpanContext().SpanID() || s.SpanContext().TraceID() != parent.SpanContext().TraceID() {
			t.Errorf("%s is not a child of the request span", name)
		}
		if !hasAttr(s, "herald.channel", "ch") {
			t.Errorf("%s lacks herald.channel=ch: %v", name, s.Attributes())
		}
	}

	// A closed engine's error is recorded on the span.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Publish(context.Background(), "ch", &engine.Publication{Data: []byte(`{}`)}, engine.PublishOptions{}); err == nil {
		t.Fatal("publish on a closed engine succeeded")
	}
	last := rec.Ended()[len(rec.Ended())-1]
	if last.Name() != "engine.Publish" || last.Status().Code.String() != "Error" || len(last.Events()) == 0 {
		t.Errorf("failed publish span: %s %v events %d", last.Name(), last.Status(), len(last.Events()))
	}
}

// TestEnginePassesOptionalInterfaces: the wrapper keeps what the hub and
// the server look for on an engine.
func TestEnginePassesOptionalInterfaces(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	mem := memory.New(memory.Config{})
	e := tracing.WrapEngine(mem, tp)
	if e.Unwrap() != engine.Engine(mem) {
		t.Error("Unwrap is not the wrapped engine")
	}
	var _ engine.NodeForgetter = e
	if err := e.ForgetNode(context.Background(), "gone"); err != nil {
		t.Errorf("ForgetNode on an engine without it: %v", err)
	}
	if err := e.Ready(context.Background()); err != nil {
		t.Errorf("Ready on an engine without it: %v", err)
	}
}

func hasAttr(s sdktrace.ReadOnlySpan, key, value string) bool {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key && kv.Value.AsString() == value {
			return true
		}
	}
	return false
}

type nopHandler struct{}

func (nopHandler) HandlePublication(string, *engine.Publication, engine.StreamPosition) {}
func (nopHandler) HandleJoin(string, *engine.ClientInfo)                                {}
func (nopHandler) HandleLeave(string, *engine.ClientInfo)                               {}
func (nopHandler) HandleControl([]byte)                                                 {}
