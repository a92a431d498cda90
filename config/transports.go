package config

import (
	"fmt"
	"reflect"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/httpstream"
)

// TransportsConfig turns on and tunes the HTTP transports (the fallbacks
// of browsers where WebSocket is blocked, and the unidirectional streams).
// Its keys sit at the top level of the file, as in Centrifugo.
type TransportsConfig struct {
	// The bidirectional fallbacks are on by default, so that a browser
	// client configured with fallbacks works out of the box; the
	// unidirectional streams are off, as in Centrifugo.
	HTTPStream    HTTPTransportConfig `yaml:"http_stream" default:"{enabled: true, handler_prefix: /connection/http_stream}" doc:"the HTTP-streaming transport, at 'handler_prefix' ('/connection/http_stream'), with the emulation endpoint for its commands; on by default"`
	SSE           HTTPTransportConfig `yaml:"sse" default:"{enabled: true, handler_prefix: /connection/sse}" doc:"the Server-Sent Events transport, at 'handler_prefix' ('/connection/sse') (the connect command in the 'cf_connect' query parameter or the POST body), with the emulation endpoint for its commands; on by default"`
	UniHTTPStream UniTransportConfig  `yaml:"uni_http_stream" default:"{handler_prefix: /connection/uni_http_stream}" doc:"the unidirectional HTTP stream, at 'handler_prefix' ('/connection/uni_http_stream'): one connect request, then pushes; off by default"`
	UniSSE        UniTransportConfig  `yaml:"uni_sse" default:"{handler_prefix: /connection/uni_sse}" doc:"the unidirectional SSE stream, at 'handler_prefix' ('/connection/uni_sse'); off by default"`
	Emulation     EmulationConfig     `yaml:"emulation" doc:"the emulation endpoint ('handler_prefix', '/emulation'), where HTTP-streaming and SSE clients send their commands after connecting; served when 'http_stream' or 'sse' is on"`
}

// HTTPTransportConfig is one HTTP transport's settings. Writes use
// websocket.write_timeout and browsers' origins are checked against
// websocket.allowed_origins, as for WebSocket.
type HTTPTransportConfig struct {
	Enabled bool `yaml:"enabled" doc:"serve the transport's endpoint"`
	// HandlerPrefix is wiring (the server mounts the endpoint; paths.go).
	HandlerPrefix string `yaml:"handler_prefix" doc:"the path of the transport's endpoint, as Centrifugo's"`
	// StreamOptions: max_request_body_size.
	httpstream.StreamOptions `yaml:",inline"`
}

// UniTransportConfig is a unidirectional HTTP transport's settings: those
// of every HTTP transport and Centrifugo's code transforms.
type UniTransportConfig struct {
	HTTPTransportConfig `yaml:",inline"`
	// UniOptions: connect_code_to_http_response.
	httpstream.UniOptions `yaml:",inline"`
}

// EmulationConfig tunes the emulation endpoint.
type EmulationConfig struct {
	// EmulationLimits are hub.Config.Emulation.
	hub.EmulationLimits `yaml:",inline"`
	// HandlerPrefix is wiring (the server mounts the endpoint; paths.go).
	HandlerPrefix string `yaml:"handler_prefix" default:"/emulation" doc:"the path of the emulation endpoint, as Centrifugo's"`
	// EmulationOptions: max_request_body_size.
	httpstream.EmulationOptions `yaml:",inline"`
}

// problems checks the HTTP transports' settings for Config.Validate.
func (t TransportsConfig) problems() Problems {
	var ps Problems
	for _, s := range []struct {
		key string
		c   HTTPTransportConfig
	}{{"http_stream", t.HTTPStream}, {"sse", t.SSE}, {"uni_http_stream", t.UniHTTPStream.HTTPTransportConfig}, {"uni_sse", t.UniSSE.HTTPTransportConfig}} {
		ps = append(ps, hubProblems(s.c.StreamOptions.Validate(), reflect.TypeOf(s.c), s.key)...)
	}
	for key, u := range map[string]UniTransportConfig{"uni_http_stream": t.UniHTTPStream, "uni_sse": t.UniSSE} {
		ps = append(ps, hubProblems(u.UniOptions.Validate(), reflect.TypeOf(u), key)...)
	}
	ps = append(ps, hubProblems(t.Emulation.EmulationOptions.Validate(), reflect.TypeOf(t.Emulation), "emulation")...)
	for key, burst := range map[string]int{
		"emulation.per_address_burst": t.Emulation.PerAddressBurst,
		"emulation.per_session_burst": t.Emulation.PerSessionBurst,
	} {
		if burst < 0 {
			ps = append(ps, Problem{Key: key, Message: fmt.Sprintf("%d: must not be negative (0 means the default)", burst)})
		}
	}
	return ps
}
