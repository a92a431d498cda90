package config

// OpenTelemetryConfig turns tracing on (package tracing). Where spans go
// and how they are sampled is not in the file: the standard OTEL_*
// environment variables say it, as for any OpenTelemetry program.
type OpenTelemetryConfig struct {
	Enabled bool `yaml:"enabled" doc:"export OpenTelemetry spans over OTLP for API requests (each method, each batch command), engine round trips (publish, history, presence), proxy calls (which carry a 'traceparent' header) and SQL authorization queries. The exporter is configured by the standard 'OTEL_*' environment variables: 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL' ('http/protobuf', the default, or 'grpc'), 'OTEL_TRACES_SAMPLER', 'OTEL_SERVICE_NAME' and the rest. Off, tracing costs nothing"`
	// GoogleCloudADCAuth is Centrifugo 6.9.1's key of the same name
	// (internal/configtypes/types.go, OpenTelemetry).
	GoogleCloudADCAuth bool `yaml:"google_cloud_adc_auth" doc:"authenticate the exporter with Google Cloud Application Default Credentials ('GOOGLE_APPLICATION_CREDENTIALS', gcloud's, or the metadata server's), to export straight to Google Cloud's OTLP endpoint ('OTEL_EXPORTER_OTLP_ENDPOINT=https://telemetry.googleapis.com', the project in 'OTEL_RESOURCE_ATTRIBUTES=gcp.project_id=…') without a collector, as Centrifugo's key of that name. Over 'grpc' the endpoint must use TLS"`
}
