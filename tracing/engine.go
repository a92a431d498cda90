package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/engine"
)

// Engine traces the round trips the hub makes to an engine: Publish,
// History, RemoveHistory, Presence and PresenceStats, each a client span
// under the caller's span (an API request's, for example). The rest of
// engine.Engine passes through untraced: joins, leaves, presence refreshes
// and control messages are the cluster's own traffic, too frequent and too
// far from any request to be worth a span.
type Engine struct {
	engine.Engine
	tracer trace.Tracer
}

// WrapEngine returns e traced with tp's tracer. Leave the engine unwrapped
// when tracing is off: the wrapper always records.
func WrapEngine(e engine.Engine, tp trace.TracerProvider) *Engine {
	return &Engine{Engine: e, tracer: tp.Tracer(Name)}
}

// Unwrap is the traced engine.
func (e *Engine) Unwrap() engine.Engine { return e.Engine }

func (e *Engine) start(ctx context.Context, name, channel string) (context.Context, trace.Span) {
	return e.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("herald.channel", channel)))
}

// end closes span with err's status.
func end(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

func (e *Engine) Publish(ctx context.Context, channel string, pub *engine.Publication, opts engine.PublishOptions) (engine.StreamPosition, error) {
	ctx, span := e.start(ctx, "engine.Publish", channel)
	sp, err := e.Engine.Publish(ctx, channel, pub, opts)
	if err == nil && sp.Offset > 0 {
		span.SetAttributes(attribute.Int64("herald.offset", int64(sp.Offset)))
	}
	end(span, err)
	return sp, err
}

func (e *Engine) History(ctx context.Context, channel string, req engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition, error) {
	ctx, span := e.start(ctx, "engine.History", channel)
	pubs, sp, err := e.Engine.History(ctx, channel, req)
	if err == nil {
		span.SetAttributes(attribute.Int("herald.publications", len(pubs)))
	}
	end(span, err)
	return pubs, sp, err
}

func (e *Engine) RemoveHistory(ctx context.Context, channel string) error {
	ctx, span := e.start(ctx, "engine.RemoveHistory", channel)
	err := e.Engine.RemoveHistory(ctx, channel)
	end(span, err)
	return err
}

func (e *Engine) Presence(ctx context.Context, channel string) (map[string]*engine.ClientInfo, error) {
	ctx, span := e.start(ctx, "engine.Presence", channel)
	p, err := e.Engine.Presence(ctx, channel)
	end(span, err)
	return p, err
}

func (e *Engine) PresenceStats(ctx context.Context, channel string) (engine.PresenceStats, error) {
	ctx, span := e.start(ctx, "engine.PresenceStats", channel)
	st, err := e.Engine.PresenceStats(ctx, channel)
	end(span, err)
	return st, err
}

// ForgetNode passes the hub's call on to an engine that keeps records per
// node (engine.NodeForgetter); for any other engine it has nothing to do.
func (e *Engine) ForgetNode(ctx context.Context, node string) error {
	if f, ok := e.Engine.(engine.NodeForgetter); ok {
		return f.ForgetNode(ctx, node)
	}
	return nil
}

// Ready passes the readiness check (/readyz) on to an engine that has one;
// any other engine is ready.
func (e *Engine) Ready(ctx context.Context) error {
	if r, ok := e.Engine.(interface{ Ready(context.Context) error }); ok {
		return r.Ready(ctx)
	}
	return nil
}
