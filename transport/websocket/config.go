package websocket

import (
	"log/slog"
	"net/http"
	"runtime"
	"time"
)

// Config tunes a Server. The zero value is usable: every zero field takes the
// default given with it.
type Config struct {
	// MaxMessageSize bounds the payload of an inbound message, fragments
	// included; a larger one closes the connection with 1009 (message too
	// big). Default 65536.
	MaxMessageSize int64
	// WriteTimeout bounds one WriteFrame, pong or close frame, and the
	// handshake response. Default 1s.
	WriteTimeout time.Duration
	// ReadTimeout is how long a message that has started to arrive (a partial
	// frame, or a fragmented message) may take to arrive completely; then the
	// connection is closed with 1008 "read timeout". It bounds slowloris
	// clients without blocking a worker. Default 10s.
	ReadTimeout time.Duration
	// CheckOrigin accepts or refuses (403) an upgrade request. Nil accepts a
	// request without an Origin header or whose Origin host equals r.Host.
	CheckOrigin func(r *http.Request) bool
	// Workers is the number of goroutines that read ready connections and
	// run Session.HandleFrame; it is a fixed pool, so a Session must not
	// block long in HandleFrame. Default 4*GOMAXPROCS.
	Workers int
	// Logger receives errors, with the connection's remote address. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Defaults for the zero fields of Config.
const (
	DefaultMaxMessageSize = 64 << 10
	DefaultWriteTimeout   = time.Second
	DefaultReadTimeout    = 10 * time.Second
)

func (c Config) withDefaults() Config {
	if c.MaxMessageSize <= 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.CheckOrigin == nil {
		c.CheckOrigin = sameOrigin
	}
	if c.Workers <= 0 {
		c.Workers = 4 * runtime.GOMAXPROCS(0)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
