package api_test

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/heraldhq/herald/api"
)

// TestRequestSpans: with a tracer provider, a request is a server span
// named after its method; an error answer marks it with the code; each
// command of a parallel batch is a child of the batch's span, a command
// without a method included.
func TestRequestSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	n := startNode(t, api.Config{TracerProvider: tp})

	n.call(t, "publish", `{"channel":"news","data":{}}`)
	n.expectError(t, "publish", `{"data":{}}`, 107)
	n.call(t, "batch", `{"parallel":true,"commands":[{"publish":{"channel":"a","data":{}}},{"presence":{"channel":"a"}},{}]}`)

	ended := rec.Ended()
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	pubs := byName["api.publish"]
	if len(pubs) != 3 {
		t.Fatalf("%d api.publish spans, want 3 (two requests, one command): %v", len(pubs), names(ended))
	}
	if pubs[0].SpanKind().String() != "server" || pubs[0].Status().Code.String() == "Error" {
		t.Errorf("first publish: kind %s, status %v", pubs[0].SpanKind(), pubs[0].Status())
	}
	if pubs[1].Status().Code.String() != "Error" || !strings.Contains(pubs[1].Status().Description, "channel required") {
		t.Errorf("refused publish: status %v", pubs[1].Status())
	}
	batch := byName["api.batch"]
	if len(batch) != 1 {
		t.Fatalf("api.batch spans: %v", names(ended))
	}
	children := 0
	for _, s := range ended {
		if s.Parent().SpanID() == batch[0].SpanContext().SpanID() {
			children++
		}
	}
	if children != 3 || len(byName["api.presence"]) != 1 || len(byName["api.unknown"]) != 1 {
		t.Errorf("batch has %d children, want publish, presence and unknown: %v", children, names(ended))
	}
	if u := byName["api.unknown"]; len(u) == 1 && u[0].Status().Code.String() != "Error" {
		t.Errorf("a command without a method is not an error span: %v", u[0].Status())
	}
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}
