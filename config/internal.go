package config

import (
	"strings"

	"github.com/heraldhq/herald/transport/tlsconf"
)

// InternalConfig is Centrifugo's internal listener (http_server.
// internal_address, internal_port and internal_tls in Centrifugo v6.9.1,
// internal/app/mux.go): when it is set, the endpoints meant for operators
// and back ends (the server API, the metrics, the health checks, the admin
// UI, Swagger) move to it, and the main listener keeps the client
// transports. Deployments expose the main one and keep this one private.
type InternalConfig struct {
	Address string `yaml:"address" doc:"a second listener (host:port) for the endpoints clients do not use: the HTTP API, '/metrics', the health checks ('/healthz', '/readyz', 'health'), the admin UI and Swagger move to it and the main listener ('address') stops serving them, as Centrifugo's 'http_server.internal_port'; 'http_api.external' and 'admin.ui.external' keep those two on the main listener. Off when empty"`
	// TLS of the internal listener, with the same options as the main one.
	TLS tlsconf.Config `yaml:"tls" doc:"certificates of the internal listener, as 'tls'; unset: the main listener's TLS applies to it too (unless 'internal.tls_external')"`
	// TLSExternal is Centrifugo's http_server.tls_external.
	TLSExternal bool `yaml:"tls_external" doc:"the main listener's TLS ('tls', 'tls_autocert') is for the main listener only: the internal listener serves plain HTTP unless 'internal.tls' is set"`
}

// InternalEnabled reports whether the internal listener is on.
func (c Config) InternalEnabled() bool { return c.Internal.Address != "" }

// internalProblems checks the internal listener's keys for Validate.
func (c Config) internalProblems() Problems {
	ps := tlsOptionProblems("internal.tls", c.Internal.TLS.Validate())
	switch {
	case c.Internal.Address == "" && c.Internal.TLS.Enabled():
		ps = append(ps, Problem{Key: "internal.tls.cert_file", Message: "set without internal.address: the internal listener is off"})
	case c.Internal.Address != "" && c.Internal.Address == c.Address && !strings.HasSuffix(c.Address, ":0"):
		ps = append(ps, Problem{Key: "internal.address", Message: "the same as address: leave it empty to serve everything on one listener"})
	}
	return ps
}
