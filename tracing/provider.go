package tracing

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The OTLP protocols an exporter can speak, as OTEL_EXPORTER_OTLP_PROTOCOL
// names them.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// NewProvider returns a tracer provider exporting over OTLP, configured by
// the standard environment variables: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
// or OTEL_EXPORTER_OTLP_PROTOCOL ("http/protobuf", the default, or
// "grpc"), the exporters' own OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT,
// _HEADERS, _TIMEOUT, _INSECURE, _CERTIFICATE and _COMPRESSION, the SDK's
// OTEL_TRACES_SAMPLER[_ARG] and OTEL_BSP_*, and OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES. version is the service.version attribute.
// Shut the provider down to flush the spans still queued.
func NewProvider(ctx context.Context, version string, opts ...Option) (*sdktrace.TracerProvider, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	proto, from := protocol()
	client, err := newClient(ctx, proto, o) // gcpadc.go
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	if client == nil {
		return nil, fmt.Errorf("tracing: %s=%q: want %q or %q", from, proto, ProtocolHTTP, ProtocolGRPC)
	}
	// New connects lazily: a collector that is down does not stop Herald,
	// its spans are dropped (and reported by the SDK's error handler).
	exp, err := otlptrace.New(ctx, client)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter over %s: %w", proto, err)
	}
	// The environment comes last so that OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES override Herald's own service name.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "herald"), attribute.String("service.version", version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// protocol is the configured OTLP protocol and the variable that set it.
func protocol() (proto, from string) {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := strings.TrimSpace(os.Getenv(name)); v != "" {
			return v, name
		}
	}
	return ProtocolHTTP, "OTEL_EXPORTER_OTLP_PROTOCOL"
}
