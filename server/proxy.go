package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"

	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/proxy"
)

// newProxy builds the node's proxy router; nil when the configuration
// proxies no event.
func newProxy(cfg config.Config, log *slog.Logger, tp trace.TracerProvider) (*proxy.Router, error) {
	opts, used := cfg.ProxyOptions()
	if !used {
		return nil, nil
	}
	// proxy.New reads the endpoints' TLS files.
	opts.Logger, opts.TracerProvider = log, tp
	r, err := proxy.New(opts)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	return r, nil
}

// proxyHeaderKeeper returns what a connection keeps of its HTTP request's
// header: only the names some proxy forwards (nil when none does), so
// that a node with many connections does not hold every upgrade header.
func proxyHeaderKeeper(cfg config.Config) func(http.Header) map[string][]string {
	var names []string
	// The hub reads the user a trusted proxy set from the same header
	// (client.user_id_http_header).
	if h := cfg.Client.UserIDHTTPHeader; h != "" {
		names = append(names, http.CanonicalHeaderKey(h))
	}
	for _, p := range cfg.Proxies {
		for _, h := range slices.Concat(p.HTTPHeaders, p.GRPCMetadata) {
			if n := http.CanonicalHeaderKey(h); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return func(h http.Header) map[string][]string {
		var out map[string][]string
		for _, n := range names {
			if vs, ok := h[n]; ok {
				if out == nil {
					out = make(map[string][]string, len(names))
				}
				out[n] = vs
			}
		}
		return out
	}
}
