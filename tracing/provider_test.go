package tracing_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/internal/test/otlptest"
	"github.com/heraldhq/herald/tracing"
)

// TestProviderExportsOverOTLP: with only the standard environment
// variables, NewProvider exports over each protocol to a real OTLP
// receiver, keeping parent/child links, the service name from
// OTEL_SERVICE_NAME, and the scope's spans.
func TestProviderExportsOverOTLP(t *testing.T) {
	for _, proto := range []string{tracing.ProtocolHTTP, tracing.ProtocolGRPC} {
		t.Run(proto, func(t *testing.T) {
			rcv := otlptest.Start(t)
			endpoint := rcv.HTTPEndpoint
			if proto == tracing.ProtocolGRPC {
				endpoint = rcv.GRPCEndpoint
			}
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
			t.Setenv("OTEL_SERVICE_NAME", "herald-test")
			t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
			tp, err := tracing.NewProvider(context.Background(), "1.2.3")
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := tp.Shutdown(ctx); err != nil {
					t.Errorf("shutdown: %v", err)
				}
			}()
			tr := tp.Tracer(tracing.Name)
			ctx, parent := tr.Start(context.Background(), "parent")
			_, child := tr.Start(ctx, "child", trace.WithSpanKind(trace.SpanKindClient))
			child.End()
			parent.End()
			spans := rcv.Await(t, func(s []otlptest.Span) bool { return len(s) >= 2 })
			p, c := otlptest.Find(spans, "parent"), otlptest.Find(spans, "child")
			if p == nil || c == nil {
				t.Fatalf("spans: %+v", spans)
			}
			if c.TraceID != p.TraceID || c.ParentSpanID != p.SpanID || p.ParentSpanID != "" {
				t.Errorf("child %+v is not under parent %+v", c, p)
			}
			if p.Service != "herald-test" {
				t.Errorf("service.name %q, want OTEL_SERVICE_NAME's herald-test", p.Service)
			}
			wantProto := "http"
			if proto == tracing.ProtocolGRPC {
				wantProto = "grpc"
			}
			if p.Protocol != wantProto {
				t.Errorf("received over %s, want %s", p.Protocol, wantProto)
			}
		})
	}
}

// TestProviderRefusesUnknownProtocol: a protocol the exporters do not
// speak is an error naming the variable, not a silent fallback.
func TestProviderRefusesUnknownProtocol(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json")
	_, err := tracing.NewProvider(context.Background(), "1.2.3")
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") {
		t.Fatalf("err = %v, want one naming OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", err)
	}
}
