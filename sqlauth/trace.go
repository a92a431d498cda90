package sqlauth

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the checks' spans (package
// tracing's Name, which this package does not import).
const tracerName = "github.com/heraldhq/herald"

// traceQuery starts the client span of one authorization query. The
// query text is not recorded: it is the configuration's, the same for
// every span of the action. With tracing off it returns ctx and a nil
// span, and costs nothing.
func (a *Authorizer) traceQuery(ctx context.Context, action, user, channel string) (context.Context, trace.Span) {
	if a.tracer == nil {
		return ctx, nil
	}
	return a.tracer.Start(ctx, "sqlauth."+action, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("db.system", "postgresql"),
			attribute.String("herald.sqlauth.action", action),
			attribute.String("herald.user", user),
			attribute.String("herald.channel", channel),
		))
}

// endQuery ends a query's span (nil with tracing off) with its verdict
// or its failure.
func endQuery(span trace.Span, allowed bool, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	} else {
		span.SetAttributes(attribute.Bool("herald.sqlauth.allowed", allowed))
	}
	span.End()
}
