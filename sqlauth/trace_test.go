package sqlauth

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestQuerySpans: with a tracer provider, each query the checks run on
// PostgreSQL is a client span under the caller's, with its verdict or its
// failure; an answer from the cache runs no query and makes no span.
func TestQuerySpans(t *testing.T) {
	f := newFixture(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	a, err := New(t.Context(), Config{
		DSN: f.dsn, CacheTTL: time.Minute, Channel: f.schema + "_auth", TracerProvider: tp,
		Namespaces: map[string]Checks{
			"orders": {Subscribe: `select ` + f.schema + `.can_subscribe($1, $2)`},
			"broken": {Subscribe: `select ` + f.schema + `.broken($1, $2)`},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	// Answers are cached only while the invalidations can be heard.
	testenv.Eventually(t, "the listener listens", 5*time.Second, func() bool {
		a.cache.mu.Lock()
		defer a.cache.mu.Unlock()
		return a.cache.usable
	})
	f.exec(t, `INSERT INTO `+f.schema+`.grants VALUES ('alice', 'orders:1')`)
	ctx, parent := tp.Tracer("test").Start(t.Context(), "subscribe")
	q := a.cfg.Namespaces["orders"].Subscribe
	if err := a.check(ctx, "subscribe", q, "alice", "orders:1"); err != nil {
		t.Fatal(err)
	}
	if got := code(a.check(ctx, "subscribe", a.cfg.Namespaces["broken"].Subscribe, "alice", "broken:x")); got != 100 {
		t.Fatalf("broken check: code %d", got)
	}
	parent.End()
	ended := rec.Ended()
	if len(ended) != 3 {
		t.Fatalf("%d spans, want the two queries' and the parent's", len(ended))
	}
	ok, failed := ended[0], ended[1]
	for _, s := range []sdktrace.ReadOnlySpan{ok, failed} {
		if s.Name() != "sqlauth.subscribe" || s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %q is not the query's under the caller's", s.Name())
		}
	}
	if !hasBool(ok, "herald.sqlauth.allowed", true) || ok.Status().Code.String() == "Error" {
		t.Errorf("allowed query span: %v %v", ok.Attributes(), ok.Status())
	}
	if failed.Status().Code.String() != "Error" || len(failed.Events()) == 0 {
		t.Errorf("failed query span: %v, %d events", failed.Status(), len(failed.Events()))
	}
	// Cached: no query, no span.
	if err := a.check(t.Context(), "subscribe", q, "alice", "orders:1"); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Ended()); n != 3 {
		t.Errorf("a cached answer made a span: %d spans", n)
	}
}

// TestQueryTracingOffIsFree: without a tracer provider the tracing
// around a query allocates nothing.
func TestQueryTracingOffIsFree(t *testing.T) {
	a := &Authorizer{}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		c, span := a.traceQuery(ctx, "subscribe", "alice", "orders:1")
		endQuery(span, true, nil)
		_ = c
	}); n != 0 {
		t.Errorf("%v allocations per query with tracing off, want 0", n)
	}
}

func hasBool(s sdktrace.ReadOnlySpan, key string, v bool) bool {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key && kv.Value.AsBool() == v {
			return true
		}
	}
	return false
}
