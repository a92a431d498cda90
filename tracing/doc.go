// Package tracing turns Herald's OpenTelemetry spans on: a tracer provider
// that exports over OTLP (gRPC or HTTP, chosen and configured by the
// standard OTEL_* environment variables) and a wrapper of engine.Engine
// that traces the engine round trips the hub makes.
//
// The API handler, the proxy router and the SQL authorizer take a
// trace.TracerProvider in their Config and trace their own work; with none
// (the default) they do no tracing work at all, so tracing costs nothing
// when it is off.
//
// Trace context travels in W3C Trace Context headers (traceparent): an
// API request that carries one continues its caller's trace, and every
// proxy request carries the proxy call's span to the backend.
package tracing

// Name is the instrumentation scope of Herald's tracers.
const Name = "github.com/heraldhq/herald"
