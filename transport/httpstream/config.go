package httpstream

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/transport/guard"
)

// Config tunes a Server. The zero value is usable: every zero field takes
// the default given with it.
type Config struct {
	// StreamOptions bound the request that opens a stream.
	StreamOptions
	// UniOptions: the code transforms of the unidirectional streams
	// (coderesponse.go); the bidirectional ones do not use them.
	UniOptions
	// Emulation bounds the emulation requests.
	Emulation EmulationOptions
	// WriteTimeout bounds each write to a stream, flush included. A client
	// that does not read for this long is cut off (the hub then counts a
	// write error, 3009), as on WebSocket. Default 1s.
	WriteTimeout time.Duration
	// CheckOrigin accepts or refuses (403) a browser's request, preflight
	// included; an accepted cross-origin request gets the CORS headers it
	// needs. Nil is guard.SameOrigin: a request without an Origin header or
	// whose Origin host equals r.Host, like the WebSocket transport.
	CheckOrigin func(r *http.Request) bool
	// Opened, when set, is called once the hub holds a new stream's
	// connection (after hub.Open), on the request's goroutine. Admission
	// control that counts connections until the hub counts them releases
	// its count here; a guard.Admission in front of the handlers is told
	// without it.
	Opened func(r *http.Request)
	// ClientAddr returns the address an emulation request counts against
	// in the hub's per-address rate limit (hub.EmulationLimits). Behind a
	// load balancer, return the client's address the proxy forwarded
	// (only from proxies you trust). Nil means the TCP peer's address,
	// an IPv6 address by its /64 (guard.ClientKey with no trusted proxy).
	ClientAddr func(r *http.Request) string
	// Logger receives errors, with the client's remote address. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// StreamOptions are the options of a stream endpoint. They are also the
// file format's (package config decodes them from the yaml tags, which
// hold each key's default and doc line).
type StreamOptions struct {
	// MaxRequestBodySize bounds the body that opens a stream (the first
	// commands, or a unidirectional connect request), in bytes; a larger
	// one is answered 413. Default 65536.
	MaxRequestBodySize int64 `yaml:"max_request_body_size" default:"65536" doc:"largest request that opens a stream (the connect command: the POST body, or the 'cf_connect' query parameter of SSE), in bytes; larger is answered '413'. '0' means the default"`
}

// EmulationOptions are the options of the emulation endpoint, also the
// file format's as StreamOptions are.
type EmulationOptions struct {
	// MaxRequestBodySize bounds an emulation request's body, in bytes; a
	// larger one is answered 413. Default 65536.
	MaxRequestBodySize int64 `yaml:"max_request_body_size" default:"65536" doc:"largest emulation request (the commands an HTTP-streaming or SSE client sends after connecting), in bytes; larger is answered '413'. '0' means the default"`
}

// Validate reports a negative size, an *optionerr.Error naming the field.
func (o StreamOptions) Validate() error {
	return bodySizeProblem(o.MaxRequestBodySize, DefaultMaxRequestBodySize)
}

// Validate reports a negative size, an *optionerr.Error naming the field.
func (o EmulationOptions) Validate() error {
	return bodySizeProblem(o.MaxRequestBodySize, DefaultMaxEmulationBodySize)
}

func bodySizeProblem(size, def int64) error {
	if size < 0 {
		return &optionerr.Error{Field: "MaxRequestBodySize", Message: fmt.Sprintf("%d: must not be negative (0 means the default, %d)", size, def)}
	}
	return nil
}

// Validate reports the fields that have no meaning, joined, each an
// *optionerr.Error naming the Go field.
func (c Config) Validate() error {
	return errors.Join(c.StreamOptions.Validate(), c.UniOptions.Validate(), optionerr.Prefix("Emulation", c.Emulation.Validate()))
}

// Defaults for the zero fields of Config.
const (
	DefaultMaxRequestBodySize   = 64 << 10
	DefaultMaxEmulationBodySize = 64 << 10
	DefaultWriteTimeout         = time.Second
)

func (c Config) withDefaults() Config {
	if c.MaxRequestBodySize <= 0 {
		c.MaxRequestBodySize = DefaultMaxRequestBodySize
	}
	if c.Emulation.MaxRequestBodySize <= 0 {
		c.Emulation.MaxRequestBodySize = DefaultMaxEmulationBodySize
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.CheckOrigin == nil {
		c.CheckOrigin = guard.SameOrigin
	}
	if c.Opened == nil {
		c.Opened = func(*http.Request) {}
	}
	if c.ClientAddr == nil {
		c.ClientAddr = func(r *http.Request) string { return guard.ClientKey(r, nil) }
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
