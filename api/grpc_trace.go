package api

import (
	"context"
	"strings"
	"unicode"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// TraceInterceptor traces every gRPC call as the HTTP API traces its
// requests: a server span named after the method ("api.publish"),
// continuing a traceparent the caller sent in the metadata, marked with
// the response's error code. Nil when the service has no TracerProvider.
func (s *GRPCService) TraceInterceptor() grpc.UnaryServerInterceptor {
	if s.a.tracer == nil {
		return nil
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		ctx = propagation.TraceContext{}.Extract(ctx, metadataCarrier(md))
		method := snakeCase(info.FullMethod[strings.LastIndexByte(info.FullMethod, '/')+1:])
		ctx, span := s.a.tracer.Start(ctx, "api."+method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("herald.api.method", method), attribute.String("rpc.system", "grpc")))
		resp, err := next(ctx, req)
		endSpan(span, ResponseError(resp))
		return resp, err
	}
}

// metadataCarrier reads a traceparent from gRPC metadata.
type metadataCarrier metadata.MD

func (c metadataCarrier) Get(key string) string {
	if v := metadata.MD(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c metadataCarrier) Set(key, value string) { metadata.MD(c).Set(key, value) }

func (c metadataCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// snakeCase turns a gRPC method name (PresenceStats) into the HTTP API's
// (presence_stats).
func snakeCase(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 && !unicode.IsUpper(rune(name[i-1])) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
