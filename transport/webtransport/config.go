package webtransport

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/transport/guard"
)

// Options are the transport's options of the file format (package config
// decodes them from the yaml tags, which hold each key's default and doc
// line), with Centrifugo v6's names.
type Options struct {
	// MessageSizeLimit bounds one message the client sends. Default 65536.
	MessageSizeLimit int `yaml:"message_size_limit" default:"65536" doc:"largest message a client may send (one JSON command line, or one Protobuf command), in bytes; a larger one closes the connection with 3501 (bad request). '0' means the default, as in Centrifugo"`
}

// Validate reports a negative limit, an *optionerr.Error naming the field.
func (o Options) Validate() error {
	if o.MessageSizeLimit < 0 {
		return &optionerr.Error{Field: "MessageSizeLimit", Message: fmt.Sprintf("%d: must not be negative (0 means the default, %d)", o.MessageSizeLimit, DefaultMessageSizeLimit)}
	}
	return nil
}

// Config tunes a Server. The zero value is usable: every zero field takes
// the default given with it.
type Config struct {
	Options
	// WriteTimeout bounds each write to the stream. A client that does not
	// read for this long is cut off (the hub then counts a write error,
	// 3009), as on WebSocket. Default 1s.
	WriteTimeout time.Duration
	// CloseWait is how long a closing connection waits for the client to
	// close the session after the disconnect push, before the server
	// closes it: closing the session at once can drop the push still in
	// flight. Default 1s, Centrifugo's pause.
	CloseWait time.Duration
	// AcceptTimeout bounds the wait for the client's bidirectional stream
	// after the session opens. Default 10s, as in Centrifugo.
	AcceptTimeout time.Duration
	// CheckOrigin accepts or refuses (403) a browser's session. Nil is
	// guard.SameOrigin.
	CheckOrigin func(r *http.Request) bool
	// Opened, when set, is called once the hub holds a new session's
	// connection (after hub.Open), on the request's goroutine.
	Opened func(r *http.Request)
	// Logger receives errors, with the client's remote address. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Defaults for the zero fields of Config.
const (
	DefaultMessageSizeLimit = 64 << 10
	DefaultWriteTimeout     = time.Second
	DefaultCloseWait        = time.Second
	DefaultAcceptTimeout    = 10 * time.Second
)

func (c Config) withDefaults() Config {
	if c.MessageSizeLimit <= 0 {
		c.MessageSizeLimit = DefaultMessageSizeLimit
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.CloseWait <= 0 {
		c.CloseWait = DefaultCloseWait
	}
	if c.AcceptTimeout <= 0 {
		c.AcceptTimeout = DefaultAcceptTimeout
	}
	if c.CheckOrigin == nil {
		c.CheckOrigin = guard.SameOrigin
	}
	if c.Opened == nil {
		c.Opened = func(*http.Request) {}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
