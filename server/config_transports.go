package server

import (
	"fmt"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/httpstream"
)

// TransportsConfig turns on and tunes the HTTP transports (the fallbacks
// of browsers where WebSocket is blocked, and the unidirectional streams).
// Its keys sit at the top level of the file, as in Centrifugo.
type TransportsConfig struct {
	// HTTPStream is /connection/http_stream, with the emulation endpoint
	// (on by default).
	HTTPStream HTTPTransportConfig `yaml:"http_stream"`
	// SSE is /connection/sse, with the emulation endpoint (on by default).
	SSE HTTPTransportConfig `yaml:"sse"`
	// UniHTTPStream is /connection/uni_http_stream (off by default).
	UniHTTPStream HTTPTransportConfig `yaml:"uni_http_stream"`
	// UniSSE is /connection/uni_sse (off by default).
	UniSSE HTTPTransportConfig `yaml:"uni_sse"`
	// Emulation is /emulation, served when http_stream or sse is on.
	Emulation EmulationConfig `yaml:"emulation"`
}

// HTTPTransportConfig is one HTTP transport's settings. Writes use
// websocket.write_timeout and browsers' origins are checked against
// websocket.allowed_origins, as for WebSocket.
type HTTPTransportConfig struct {
	// Enabled mounts the transport's endpoint.
	Enabled bool `yaml:"enabled"`
	// MaxRequestBodySize bounds the request that opens a stream (the
	// connect command, or cf_connect), in bytes (65536; 0 means the
	// default). Larger is answered 413.
	MaxRequestBodySize int64 `yaml:"max_request_body_size"`
}

// EmulationConfig tunes the emulation endpoint.
type EmulationConfig struct {
	// MaxRequestBodySize bounds an emulation request, in bytes (65536; 0
	// means the default). Larger is answered 413.
	MaxRequestBodySize int64 `yaml:"max_request_body_size"`
	// PerAddressRate and PerAddressBurst bound the requests of one client
	// address, per second and at once (200, 400); PerSessionRate and
	// PerSessionBurst those of one session on a node (20, 50). 0 means the
	// default; a negative rate turns that limit off.
	PerAddressRate  float64 `yaml:"per_address_rate"`
	PerAddressBurst int     `yaml:"per_address_burst"`
	PerSessionRate  float64 `yaml:"per_session_rate"`
	PerSessionBurst int     `yaml:"per_session_burst"`
}

// hub converts the emulation endpoint's rate limits.
func (e EmulationConfig) hub() hub.EmulationLimits {
	return hub.EmulationLimits{
		PerAddress: e.PerAddressRate, PerAddressBurst: e.PerAddressBurst,
		PerSession: e.PerSessionRate, PerSessionBurst: e.PerSessionBurst,
	}
}

// Where the HTTP transports are mounted, as in Centrifugo.
const (
	HTTPStreamPath    = "/connection/http_stream"
	SSEPath           = "/connection/sse"
	EmulationPath     = "/emulation"
	UniHTTPStreamPath = "/connection/uni_http_stream"
	UniSSEPath        = "/connection/uni_sse"
)

// defaultTransportsConfig has the bidirectional fallbacks on, so that a
// browser client configured with fallbacks works out of the box, and the
// unidirectional streams off, as in Centrifugo.
func defaultTransportsConfig() TransportsConfig {
	return TransportsConfig{
		HTTPStream: HTTPTransportConfig{Enabled: true},
		SSE:        HTTPTransportConfig{Enabled: true},
	}
}

// problems checks the HTTP transports' settings for Config.Validate.
func (t TransportsConfig) problems() Problems {
	var ps Problems
	for _, s := range []struct {
		key  string
		size int64
	}{
		{"http_stream", t.HTTPStream.MaxRequestBodySize},
		{"sse", t.SSE.MaxRequestBodySize},
		{"uni_http_stream", t.UniHTTPStream.MaxRequestBodySize},
		{"uni_sse", t.UniSSE.MaxRequestBodySize},
		{"emulation", t.Emulation.MaxRequestBodySize},
	} {
		if s.size < 0 {
			ps = append(ps, Problem{Key: s.key + ".max_request_body_size",
				Message: fmt.Sprintf("%d: must not be negative (0 means the default, %d)", s.size, httpstream.DefaultMaxRequestBodySize)})
		}
	}
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
