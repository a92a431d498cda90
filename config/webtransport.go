package config

import (
	"reflect"

	"github.com/heraldhq/herald/transport/webtransport"
)

// HTTP3Config is http.http3: the main listener also serves HTTP/3 (QUIC)
// on the same port over UDP, as Centrifugo's http_server.http3.
type HTTP3Config struct {
	// Enabled is wiring (server/http3.go).
	Enabled bool `yaml:"enabled" doc:"also serve the main listener's endpoints over HTTP/3 (QUIC, UDP on the port of 'address'), and advertise it to HTTP/1.1 and HTTP/2 clients with an 'Alt-Svc' header, as Centrifugo's 'http_server.http3.enabled'. Needs 'tls' or 'tls_autocert'. The HTTP transports, the server API and the other HTTP endpoints work over it; WebSocket does not (browsers open it over HTTP/1.1), and 'webtransport' needs it"`
}

// WebTransportConfig is the WebTransport client transport, with
// Centrifugo v6's keys.
type WebTransportConfig struct {
	// Enabled and HandlerPrefix are wiring (the server mounts the
	// endpoint on the HTTP/3 listener; paths.go).
	Enabled       bool   `yaml:"enabled" doc:"serve the WebTransport transport (centrifuge-js's 'webtransport'): a session over HTTP/3 whose bidirectional stream carries the protocol, JSON lines or, with the query parameter 'cf_protocol=protobuf', varint-delimited Protobuf. Needs 'http.http3.enabled'"`
	HandlerPrefix string `yaml:"handler_prefix" default:"/connection/webtransport" doc:"the path of the WebTransport endpoint, as Centrifugo's"`
	// Options: message_size_limit.
	webtransport.Options `yaml:",inline"`
}

// webTransportProblems checks http.http3 and webtransport.
func (c Config) webTransportProblems() Problems {
	var ps Problems
	if c.HTTP.HTTP3.Enabled && !c.TLSEnabled() {
		ps = append(ps, Problem{Key: "http.http3.enabled", Message: "HTTP/3 runs over TLS only: set tls (cert_file and key_file) or tls_autocert"})
	}
	if c.WebTransport.Enabled && !c.HTTP.HTTP3.Enabled {
		ps = append(ps, Problem{Key: "webtransport.enabled", Message: "WebTransport runs over HTTP/3: set http.http3.enabled (Centrifugo's http_server.http3.enabled) too"})
	}
	ps = append(ps, hubProblems(c.WebTransport.Options.Validate(), reflect.TypeOf(c.WebTransport), "webtransport")...)
	return ps
}
