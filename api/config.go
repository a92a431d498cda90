package api

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/heraldhq/herald/internal/optionerr"
	"go.opentelemetry.io/otel/trace"
)

// DefaultMaxBodySize bounds a request body when Config.MaxBodySize is 0.
const DefaultMaxBodySize = 1 << 20

// DefaultBodyReadTimeout bounds the arrival of a request body when
// Config.BodyReadTimeout is 0.
const DefaultBodyReadTimeout = 10 * time.Second

// DefaultMaxBatchCommands bounds the commands of a batch when
// Config.MaxBatchCommands is 0.
const DefaultMaxBatchCommands = 1000

// DefaultMaxBatchResponseSize bounds the replies of one batch when
// Config.MaxBatchResponseSize is 0.
const DefaultMaxBatchResponseSize = 16 << 20

// DefaultMaxResponseSize bounds the result of one method call when
// Config.MaxResponseSize is 0: the batch's bound, so that a read that fits
// in a batch fits alone.
const DefaultMaxResponseSize = DefaultMaxBatchResponseSize

// ErrorModeTransport selects the transport error mode: errors are sent as
// the bare error object with an HTTP status per code.
const ErrorModeTransport = "transport"

// Config configures the API handler. It is also the http_api section of
// the configuration file (package config inlines it): the yaml, default
// and doc tags are the file's key, default and documentation, and the
// default tags are the Default* values above (a test keeps them equal).
type Config struct {
	// Key is the API key callers must present; required unless Insecure.
	Key string `yaml:"key" doc:"the API key, sent as 'X-API-Key: KEY' or 'Authorization: apikey KEY'; without a key the API is off, and '/api/' requests get '403' with a JSON error that says so"`
	// Insecure accepts every request without a key. For development only.
	Insecure bool `yaml:"insecure" doc:"development only: the API without a key"`
	// ErrorMode is "" (errors as HTTP 200 with {"error":…}) or
	// "transport" (errors as HTTP statuses). A request can ask for the
	// transport mode with the header X-Centrifugo-Error-Mode: transport.
	ErrorMode string `yaml:"error_mode" doc:"'transport': errors as HTTP statuses (500, 404, 400, 416, 409) with the error object as body, instead of 200 with '{\"error\":…}'"`
	// MaxBodySize bounds a request body in bytes; a larger one gets 413.
	// Zero means DefaultMaxBodySize (1 MiB).
	MaxBodySize int64 `yaml:"max_body_size" default:"1048576" doc:"largest request body in bytes; larger answers 413. The body is read as it arrives: a declared 'Content-Length' reserves no memory"`
	// BodyReadTimeout bounds how long the body may take to arrive,
	// counted from the start of the request's handling; a body still
	// arriving then is answered 408 and the connection closed. Zero means
	// DefaultBodyReadTimeout (10s). It needs a net/http server underneath
	// (http.ResponseController); elsewhere it is not applied.
	BodyReadTimeout time.Duration `yaml:"body_read_timeout" default:"10s" doc:"longest a request body may take to arrive, from the start of the request; a body still arriving then answers '408' and the connection is closed. It also bounds a body sent to the other endpoints ('/healthz', '/metrics', …), which read none: the connection is closed after the answer. '0' means the default"`
	// MaxBatchCommands bounds the commands of one batch request; a larger
	// batch is answered with error 107 and none of its commands run. Zero
	// means DefaultMaxBatchCommands (1000).
	MaxBatchCommands int `yaml:"max_batch_commands" default:"1000" doc:"most commands in one 'batch' request; a larger batch answers error 107 naming the limit, and none of its commands run. '0' means the default"`
	// MaxBatchResponseSize bounds the encoded replies of one batch, in
	// bytes. Replies are streamed as they are ready; the reply that would
	// pass the bound and every later one are error 106 naming it, and in
	// a sequential batch their commands do not run. Zero means
	// DefaultMaxBatchResponseSize (16 MiB).
	MaxBatchResponseSize int64 `yaml:"max_batch_response_size" default:"16777216" doc:"most bytes of replies in one 'batch' response (16 MiB). Replies are streamed as they are ready; the reply that would pass the limit and every later one are error 106 naming it, and in a sequential batch their commands do not run. '0' means the default"`
	// MaxResponseSize bounds the result of one method call, in bytes,
	// over HTTP, the single endpoint, a batch and gRPC: a history,
	// presence or channels answer that would pass it is error 106 naming
	// the limit and how to ask for less, and history stops reading the
	// stream once it is passed instead of loading it whole. Zero means
	// DefaultMaxResponseSize (16 MiB).
	MaxResponseSize int64 `yaml:"max_response_size" default:"16777216" doc:"most bytes of one method's result (16 MiB), over HTTP, the single endpoint, a batch and the gRPC API; a result that would pass it (a 'history' with 'limit: -1' of a large stream, the 'presence' of a crowded channel, 'channels' of a large cluster) is error 106 naming the limit and how to ask for less ('history': a smaller 'limit', paging with 'since'). '0' means the default"`
	// AllowKeyInQuery also accepts the key in the api_key query
	// parameter, as Centrifugo does. Off by default: URLs end up in access
	// logs, proxies' logs and shell history, and the key with them.
	AllowKeyInQuery bool `yaml:"allow_key_in_query" doc:"also accept the key as '?api_key=KEY', as Centrifugo does. Off by default because URLs, and the key with them, end up in access logs and proxies' logs"`
	// Logger receives internal errors; nil means slog.Default().
	Logger *slog.Logger `yaml:"-"`
	// TracerProvider, when set, traces every request (a server span per
	// method, continuing a traceparent the caller sent) and every command
	// of a batch (a child span each); the hub's calls under them carry
	// the span in their context. Nil means no tracing, at no cost.
	TracerProvider trace.TracerProvider `yaml:"-"`
}

// Validate reports the fields that have no meaning, each an
// *hub.OptionError naming the Go field (see hub.OptionErrors), so that a
// configuration layer can name its own keys. A missing Key is not one of
// them: NewHandler refuses it, and a server may leave its API off instead.
func (c Config) Validate() error {
	var errs optionerr.List
	switch c.ErrorMode {
	case "", ErrorModeTransport:
	default:
		errs.Add("ErrorMode", "%q: want \"\" or %q", c.ErrorMode, ErrorModeTransport)
	}
	if c.MaxBodySize < 0 {
		errs.Add("MaxBodySize", "%d: must not be negative (0 means the default, %d)", c.MaxBodySize, DefaultMaxBodySize)
	}
	if c.BodyReadTimeout < 0 {
		errs.Add("BodyReadTimeout", "%s: must not be negative (0 means the default, %s)", c.BodyReadTimeout, DefaultBodyReadTimeout)
	}
	if c.MaxBatchCommands < 0 {
		errs.Add("MaxBatchCommands", "%d: must not be negative (0 means the default, %d)", c.MaxBatchCommands, DefaultMaxBatchCommands)
	}
	if c.MaxResponseSize < 0 {
		errs.Add("MaxResponseSize", "%d: must not be negative (0 means the default, %d)", c.MaxResponseSize, DefaultMaxResponseSize)
	}
	if c.MaxBatchResponseSize < 0 {
		errs.Add("MaxBatchResponseSize", "%d: must not be negative (0 means the default, %d)", c.MaxBatchResponseSize, DefaultMaxBatchResponseSize)
	}
	return errs.Err()
}

func (c Config) withDefaults() (Config, error) {
	if c.Key == "" && !c.Insecure {
		return c, errors.New("api: Key is required (or set Insecure for development)")
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("api: %w", err)
	}
	if c.BodyReadTimeout == 0 {
		c.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if c.MaxBatchCommands == 0 {
		c.MaxBatchCommands = DefaultMaxBatchCommands
	}
	if c.MaxBatchResponseSize == 0 {
		c.MaxBatchResponseSize = DefaultMaxBatchResponseSize
	}
	if c.MaxResponseSize == 0 {
		c.MaxResponseSize = DefaultMaxResponseSize
	}
	if c.MaxBodySize == 0 {
		c.MaxBodySize = DefaultMaxBodySize
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}
