package tracing

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/oauth"
)

// googleCloudScope is the OAuth2 scope of the tokens Google Cloud's OTLP
// endpoint (telemetry.googleapis.com) takes, as Centrifugo 6.9.1 asks
// (internal/telemetry/provider.go).
const googleCloudScope = "https://www.googleapis.com/auth/cloud-platform"

// Option changes how NewProvider exports.
type Option func(*options)

type options struct {
	googleCloudADC bool
}

// WithGoogleCloudADC authenticates the exporter with Google Cloud
// Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, the
// gcloud user's, or the metadata server's), so that spans go to Google
// Cloud's OTLP endpoint without a collector beside Herald: as a bearer
// token on each request, minted on the first export and refreshed before
// it expires. The endpoint and project are still the OTEL_* variables'.
// Over gRPC the endpoint must use TLS, since gRPC sends no token in the
// clear.
func WithGoogleCloudADC() Option {
	return func(o *options) { o.googleCloudADC = true }
}

// newClient is the OTLP client of proto with the options applied.
func newClient(ctx context.Context, proto string, o options) (otlptrace.Client, error) {
	switch proto {
	case ProtocolHTTP:
		var opts []otlptracehttp.Option
		if o.googleCloudADC {
			ts, err := google.DefaultTokenSource(ctx, googleCloudScope)
			if err != nil {
				return nil, fmt.Errorf("Google Cloud application default credentials: %w", err)
			}
			// The client outlives ctx: the token source refreshes with
			// a context of its own.
			opts = append(opts, otlptracehttp.WithHTTPClient(oauth2.NewClient(context.Background(), ts)))
		}
		return otlptracehttp.NewClient(opts...), nil
	case ProtocolGRPC:
		var opts []otlptracegrpc.Option
		if o.googleCloudADC {
			creds, err := oauth.NewApplicationDefault(ctx, googleCloudScope)
			if err != nil {
				return nil, fmt.Errorf("Google Cloud application default credentials: %w", err)
			}
			opts = append(opts, otlptracegrpc.WithDialOption(grpc.WithPerRPCCredentials(creds)))
		}
		return otlptracegrpc.NewClient(opts...), nil
	}
	return nil, nil
}
