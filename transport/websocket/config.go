package websocket

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"time"

	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/transport/guard"
)

// Config tunes a Server. The zero value is usable: every zero field takes the
// default given with it. It is also the file format's websocket section
// (package config decodes it from the yaml tags, which hold each key's
// default and doc line); the fields tagged "-" are set by the program.
type Config struct {
	// MaxMessageSize bounds the payload of an inbound message, fragments
	// included; a larger one closes the connection with 1009 (message too
	// big). Default 65536.
	MaxMessageSize int64 `yaml:"message_size_limit" default:"65536" doc:"largest incoming message in bytes; a larger one closes the connection with 1009"`
	// WriteTimeout bounds the progress of a write: a WriteFrame, pong or
	// close frame fails when the peer took less than 16 KiB of it (and not
	// the rest) within WriteTimeout, so a peer that stopped reading is cut
	// and one that reads steadily is not. A data frame to a peer that had
	// been reading gets three such timeouts in a row (pace.go). It also
	// bounds the handshake response. Default 1s.
	WriteTimeout time.Duration `yaml:"write_timeout" default:"1s" doc:"a write to one client fails (the connection closes with 3009) when the client took less than 16 KiB within this long (on Linux as the kernel counts what it took, elsewhere of the write itself): a client that stopped reading is cut, one that reads steadily however far behind is not. On Linux a client that had been reading (it took at least 16 KiB in two spans of at least this long each, or in two of these timeouts of the same write) is cut only after three such timeouts in a row: a reader whose process got no CPU for a moment is not taken for one that stopped"`
	// ReadTimeout is how long a message that has started to arrive (a partial
	// frame, or a fragmented message) may take to arrive completely; then the
	// connection is closed with 1008 "read timeout". It bounds slowloris
	// clients without blocking a worker. Default 10s.
	ReadTimeout time.Duration `yaml:"read_timeout" default:"10s" doc:"longest a started message may take to arrive completely"`
	// ReadBufferSize is the read buffer a connection of the portable path
	// starts with, and keeps between messages (up to four times it when a
	// larger message grew it): the memory an idle connection holds for
	// reading. The epoll path holds no buffer per connection, so it does
	// not apply there. Centrifugo's websocket.read_buffer_size and
	// uni_websocket.read_buffer_size size the same per-connection buffer
	// (v6.9.1 internal/websocket conn.go, 4096 when zero). Default 4096.
	ReadBufferSize int `yaml:"read_buffer_size" default:"4096" doc:"the read buffer, in bytes, each connection of the portable poller starts with and keeps between messages (a larger message grows it for as long as it takes): the memory an idle connection holds for reading. The epoll poller holds no buffer per connection, so it does not apply to it. '0': 4096"`
	// CheckOrigin accepts or refuses (403) an upgrade request. Nil is
	// guard.SameOrigin: a request without an Origin header or whose Origin
	// host equals r.Host (guard.Origins allows more).
	CheckOrigin func(r *http.Request) bool `yaml:"-"`
	// OriginHint is added to the warning logged when CheckOrigin refuses
	// an origin (at most once a minute per origin): what to change to
	// allow it, such as the server's configuration key. Default: a
	// pointer at Config.CheckOrigin.
	OriginHint string `yaml:"-"`
	// Poller selects how connections are read (see the package
	// documentation): PollerEpoll, a readiness loop with a fixed pool of
	// workers that holds no goroutine or buffer for an idle connection
	// (Linux only); PollerPortable, a goroutine with its own read buffer
	// per connection, on any system, at a higher memory cost per idle
	// connection; or PollerAuto, the default, which is epoll on Linux and
	// portable elsewhere. PollerEpoll off Linux is an error from NewServer.
	Poller Poller `yaml:"poller" default:"auto" doc:"how connections are read. 'epoll' (Linux only): a readiness loop with a fixed pool of workers; an idle connection holds no goroutine and no buffer. 'portable' (any system): a goroutine and a read buffer ('read_buffer_size', more while a large message arrives) per connection, so an idle connection costs more memory; it also reads connections that are not plain TCP sockets. 'auto' is 'epoll' on Linux and 'portable' elsewhere, and 'portable' when the listener serves TLS ('epoll' needs the plain socket). 'epoll' on another system or with TLS is a configuration error"`
	// Workers is the number of goroutines of the epoll path that read
	// ready connections and run Receiver.HandleFrame; it is a fixed pool,
	// so a Receiver must not block long in HandleFrame. Default
	// 4*GOMAXPROCS. The portable path has no pool: each connection is read
	// on its own goroutine, so Workers does not apply to it.
	Workers int `yaml:"-"`
	// Compression accepts permessage-deflate (RFC 7692) when a client
	// offers it, without context takeover in either direction: messages
	// are compressed one by one with pooled compressors, so an idle
	// connection holds no compression state. A client that does not offer
	// it is served uncompressed.
	Compression bool `yaml:"compression" doc:"accept permessage-deflate (RFC 7692) from clients that offer it, always without context takeover. A client that does not offer it is served uncompressed. The unidirectional endpoint has its own, 'uni_websocket.compression'"`
	// CompressionMinSize is the smallest outgoing message, in bytes, that
	// is compressed on a connection that negotiated compression; smaller
	// ones go out uncompressed (the RSV1 bit is per message). Default 0:
	// every message.
	CompressionMinSize int `yaml:"compression_min_size" doc:"smallest outgoing message, in bytes, that is compressed on a connection that negotiated compression; smaller ones go out uncompressed. '0': every message"`
	// CompressionLevel is the flate level of outgoing messages, from 1
	// (fastest, the default) to 9 (smallest). Incoming compressed
	// messages are limited by MaxMessageSize once decompressed.
	CompressionLevel int `yaml:"compression_level" default:"1" doc:"deflate level of outgoing messages, '1' (fastest) to '9' (smallest); '0' means the default"`
	// UniJoinPushes writes the pushes of one hub frame to a
	// unidirectional connection in one text frame, '\n'-separated,
	// instead of a frame each (Centrifugo's
	// uni_websocket.join_push_messages; the client must split them).
	UniJoinPushes bool `yaml:"-"`
	// UniNoDisconnectPush closes a unidirectional connection with the
	// close frame alone, without the disconnect push before it, and
	// UniNoClosingHandshake without the close frame either (Centrifugo's
	// uni_websocket.disable_disconnect_push and disable_closing_handshake,
	// v6.9.1 internal/uniws).
	UniNoDisconnectPush   bool `yaml:"-"`
	UniNoClosingHandshake bool `yaml:"-"`
	// Logger receives errors, with the connection's remote address. Nil means
	// slog.Default().
	Logger *slog.Logger `yaml:"-"`
}

// Defaults for the zero fields of Config.
const (
	DefaultMaxMessageSize = 64 << 10
	DefaultWriteTimeout   = time.Second
	DefaultReadTimeout    = 10 * time.Second
	// DefaultReadBufferSize is small, since every connection of the
	// portable path holds one.
	DefaultReadBufferSize = 4 << 10
)

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.MaxMessageSize <= 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.Poller == "" {
		c.Poller = PollerAuto
	}
	if c.CheckOrigin == nil {
		c.CheckOrigin = guard.SameOrigin
	}
	if c.OriginHint == "" {
		c.OriginHint = "allow the origin in Config.CheckOrigin of the WebSocket transport"
	}
	if c.Workers <= 0 {
		c.Workers = 4 * runtime.GOMAXPROCS(0)
	}
	if c.CompressionLevel == 0 {
		c.CompressionLevel = DefaultCompressionLevel
	}
	if c.ReadBufferSize <= 0 {
		c.ReadBufferSize = DefaultReadBufferSize
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports the fields that have no meaning, joined, each a
// *optionerr.Error (hub.OptionError) naming the Go field (so that a configuration layer can
// name its own keys instead). NewServer refuses such a Config with the
// same errors.
func (c Config) Validate() error {
	var errs optionerr.List
	if c.MaxMessageSize < 0 {
		errs.Add("MaxMessageSize", "%d: must not be negative", c.MaxMessageSize)
	}
	if _, err := c.Poller.Resolve(); err != nil {
		errs.Add("Poller", "%s", err)
	}
	if l := c.CompressionLevel; l != 0 && (l < MinCompressionLevel || l > MaxCompressionLevel) {
		errs.Add("CompressionLevel", "%d: want %d (fastest) to %d (smallest), or 0 for the default", l, MinCompressionLevel, MaxCompressionLevel)
	}
	if c.CompressionMinSize < 0 {
		errs.Add("CompressionMinSize", "%d: must not be negative", c.CompressionMinSize)
	}
	if c.ReadBufferSize < 0 {
		errs.Add("ReadBufferSize", "%d: must not be negative", c.ReadBufferSize)
	}
	return errs.Err()
}

// Poller names a way of reading connections; the zero value is PollerAuto.
type Poller string

const (
	// PollerAuto is PollerEpoll on Linux and PollerPortable elsewhere.
	PollerAuto Poller = "auto"
	// PollerEpoll reads connections when epoll reports them ready, on a
	// fixed pool of workers. Linux only.
	PollerEpoll Poller = "epoll"
	// PollerPortable reads each connection on a goroutine of its own, with
	// blocking reads and deadlines. Any system.
	PollerPortable Poller = "portable"
)

// Resolve returns the poller p stands for on this system, PollerEpoll or
// PollerPortable. An unknown name, or epoll where there is none, is an
// error that quotes p.
func (p Poller) Resolve() (Poller, error) {
	switch p {
	case "", PollerAuto:
		if EpollAvailable {
			return PollerEpoll, nil
		}
		return PollerPortable, nil
	case PollerEpoll:
		if !EpollAvailable {
			return "", fmt.Errorf("%q needs Linux (this is %s): use %q or %q", p, runtime.GOOS, PollerAuto, PollerPortable)
		}
		return p, nil
	case PollerPortable:
		return p, nil
	}
	return "", fmt.Errorf("%q: want %q, %q or %q", p, PollerAuto, PollerEpoll, PollerPortable)
}
