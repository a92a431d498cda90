package config

// OpenTelemetryConfig turns tracing on (package tracing). Where spans go
// and how they are sampled is not in the file: the standard OTEL_*
// environment variables say it, as for any OpenTelemetry program.
type OpenTelemetryConfig struct {
	Enabled bool `yaml:"enabled" doc:"export OpenTelemetry spans over OTLP for API requests (each method, each batch command), engine round trips (publish, history, presence), proxy calls (which carry a 'traceparent' header) and SQL authorization queries. The exporter is configured by the standard 'OTEL_*' environment variables: 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL' ('http/protobuf', the default, or 'grpc'), 'OTEL_TRACES_SAMPLER', 'OTEL_SERVICE_NAME' and the rest. Off, tracing costs nothing"`
}
