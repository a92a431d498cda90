package api

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the API's spans (the same as
// package tracing's Name, which this package does not import).
const tracerName = "github.com/heraldhq/herald"

// traceRequest starts the server span of an API request, named after its
// method and continuing the caller's trace when the request carries a
// traceparent header. With tracing off it returns r and a nil span, and
// costs nothing.
func (a *handler) traceRequest(r *http.Request, method string) (*http.Request, trace.Span) {
	if a.tracer == nil {
		return r, nil
	}
	ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := a.tracer.Start(ctx, "api."+method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("herald.api.method", method)))
	return r.WithContext(ctx), span
}

// traceCommand starts the span of one batch command, a child of the
// batch's span; nil with tracing off.
func (a *handler) traceCommand(ctx context.Context, method string) (context.Context, trace.Span) {
	if a.tracer == nil {
		return ctx, nil
	}
	return a.tracer.Start(ctx, "api."+method, trace.WithAttributes(attribute.String("herald.api.method", method)))
}

// endSpan ends span (nil with tracing off) with the API error, if any.
func endSpan(span trace.Span, e *Error) {
	if span == nil {
		return
	}
	if e != nil {
		span.SetAttributes(attribute.Int64("herald.error.code", int64(e.Code)))
		span.SetStatus(codes.Error, e.Message)
	}
	span.End()
}
