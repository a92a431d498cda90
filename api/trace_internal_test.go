package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestTracingOffIsFree: without a tracer provider, the tracing of a
// request and of a batch command allocates nothing and leaves the
// request as it was.
func TestTracingOffIsFree(t *testing.T) {
	a := &handler{}
	r := httptest.NewRequest(http.MethodPost, "/publish", nil)
	r.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		r2, span := a.traceRequest(r, "publish")
		if r2 != r || span != nil {
			t.Fatal("tracing off changed the request")
		}
		endSpan(span, nil)
		_, span = a.traceCommand(ctx, "publish")
		endSpan(span, &Error{Code: 100})
	}); n != 0 {
		t.Errorf("%v allocations per request with tracing off, want 0", n)
	}
}
