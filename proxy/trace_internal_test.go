package proxy

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

// TestTracingOffIsFree: without a tracer provider, the tracing around a
// call allocates nothing and adds no header.
func TestTracingOffIsFree(t *testing.T) {
	r := &Router{}
	e := &endpoint{Endpoint: Endpoint{Name: "app"}, r: r}
	ci := callInfo{event: "connect", clientID: "c1"}
	h := http.Header{}
	ctx := context.Background()
	failure := errors.New("down")
	if n := testing.AllocsPerRun(100, func() {
		c, span := r.traceCall(ctx, e, ci)
		r.injectTrace(c, h)
		endCall[struct{}](span, nil, failure)
	}); n != 0 {
		t.Errorf("%v allocations per call with tracing off, want 0", n)
	}
	if len(h) != 0 {
		t.Errorf("tracing off added headers: %v", h)
	}
}
