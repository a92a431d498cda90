package api

import (
	"errors"
	"fmt"
	"log/slog"
)

// DefaultMaxBodySize bounds a request body when Config.MaxBodySize is 0.
const DefaultMaxBodySize = 1 << 20

// ErrorModeTransport selects the transport error mode: errors are sent as
// the bare error object with an HTTP status per code.
const ErrorModeTransport = "transport"

// Config configures the API handler.
type Config struct {
	// Key is the API key callers must present; required unless Insecure.
	Key string
	// Insecure accepts every request without a key. For development only.
	Insecure bool
	// ErrorMode is "" (errors as HTTP 200 with {"error":…}) or
	// "transport" (errors as HTTP statuses). A request can ask for the
	// transport mode with the header X-Centrifugo-Error-Mode: transport.
	ErrorMode string
	// MaxBodySize bounds a request body in bytes; a larger one gets 413.
	// Zero means DefaultMaxBodySize (1 MiB).
	MaxBodySize int64
	// Logger receives internal errors; nil means slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() (Config, error) {
	if c.Key == "" && !c.Insecure {
		return c, errors.New("api: Key is required (or set Insecure for development)")
	}
	switch c.ErrorMode {
	case "", ErrorModeTransport:
	default:
		return c, fmt.Errorf("api: error mode %q: want \"\" or %q", c.ErrorMode, ErrorModeTransport)
	}
	if c.MaxBodySize < 0 {
		return c, fmt.Errorf("api: max body size %d: must not be negative", c.MaxBodySize)
	}
	if c.MaxBodySize == 0 {
		c.MaxBodySize = DefaultMaxBodySize
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}
