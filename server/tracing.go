package server

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/tracing"
)

// newTracing starts the span exporter when opentelemetry.enabled; with
// tracing off both results are nil, and nothing is traced. The interface
// is nil then, not a nil pointer in it, so that the packages' "nil means
// off" holds.
func newTracing(cfg config.Config) (*sdktrace.TracerProvider, trace.TracerProvider, error) {
	if !cfg.OpenTelemetry.Enabled {
		return nil, nil, nil
	}
	var opts []tracing.Option
	if cfg.OpenTelemetry.GoogleCloudADCAuth {
		opts = append(opts, tracing.WithGoogleCloudADC())
	}
	p, err := tracing.NewProvider(context.Background(), Version, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("opentelemetry: %w", err)
	}
	return p, p, nil
}
