package proxy

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the proxy's spans (package
// tracing's Name, which this package does not import).
const tracerName = "github.com/heraldhq/herald"

// traceCall starts the client span of one call to e, a child of the
// span in ctx if any. With tracing off it returns ctx and a nil span, and
// costs nothing.
func (r *Router) traceCall(ctx context.Context, e *endpoint, ci callInfo) (context.Context, trace.Span) {
	if r.tracer == nil {
		return ctx, nil
	}
	return r.tracer.Start(ctx, "proxy."+ci.event, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("herald.proxy.name", e.Name),
			attribute.String("herald.proxy.event", ci.event),
			attribute.String("herald.client", ci.clientID),
		))
}

// injectTrace puts the W3C trace context of ctx's span into a proxy
// request's header (traceparent, and tracestate when there is one), so
// that the backend's spans join the call's trace. It replaces a
// traceparent forwarded from the client or set statically: the backend's
// parent is this call. Nothing happens with tracing off.
func (r *Router) injectTrace(ctx context.Context, h http.Header) {
	if r.tracer == nil {
		return
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}

// endCall ends a call's span (nil with tracing off) with its outcome: a
// failure, or the backend's error or disconnect answer.
func endCall[T any](span trace.Span, env *envelope[T], err error) {
	if span == nil {
		return
	}
	switch {
	case err != nil:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	case env.Disconnect != nil:
		span.SetAttributes(attribute.Int64("herald.proxy.disconnect", int64(env.Disconnect.Code)))
	case env.Error != nil:
		span.SetAttributes(attribute.Int64("herald.proxy.error", int64(env.Error.Code)))
	}
	span.End()
}
