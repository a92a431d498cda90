package nats

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/precheck"
)

// Defaults used for zero fields of Config.
const (
	DefaultPrefix = "herald"
	// DefaultPingInterval is how often the client pings an idle server
	// connection; two unanswered pings make it reconnect. nats.go's own
	// default (two minutes) would leave a dead connection unnoticed far
	// longer than subscribers tolerate.
	DefaultPingInterval  = 5 * time.Second
	DefaultReconnectWait = 500 * time.Millisecond
	DefaultDialTimeout   = 5 * time.Second
	// DefaultFlushTimeout bounds Subscribe's wait for the server's
	// confirmation when the caller's context has no deadline.
	DefaultFlushTimeout = 10 * time.Second
	// DefaultFragmentTimeout is how long a node keeps the first fragments
	// of a large message waiting for the rest.
	DefaultFragmentTimeout = 30 * time.Second
	// DefaultMaxMessageSize bounds a reassembled message.
	DefaultMaxMessageSize = 64 << 20
)

// ErrNoHistory is returned by History, RemoveHistory and by Publish with
// history options: NATS core keeps no streams. Configuration must not
// give history or recovery to namespaces served by this engine.
var ErrNoHistory = errors.New("nats engine keeps no history")

// ErrNoPresence is returned by the presence methods when Config.Presence
// is nil.
var ErrNoPresence = errors.New("nats engine has no presence store configured")

// Config configures an Engine. It is also the engine.nats section of
// Herald's configuration file: the yaml, default and doc tags are that
// file's keys, defaults (which withDefaults applies to zero fields, as a
// test checks) and documentation; fields tagged yaml:"-" are not in the
// file, set by the program or left to their defaults.
type Config struct {
	// URL is the server URL, or several separated by commas (nats.Connect
	// syntax, credentials may be embedded). Required.
	URL string `yaml:"url" default:"nats://127.0.0.1:4222" doc:"the NATS server"`
	// Prefix starts every subject the engine uses, so several Herald
	// clusters (or tests) can share one NATS: dot-separated tokens of
	// letters, digits, '_' and '-'.
	Prefix string `yaml:"prefix" default:"herald" doc:"starts every subject"`
	// NodeID names this node's connection ("herald:<NodeID>" in the
	// server's monitoring); empty means a random id.
	NodeID string `yaml:"-"`
	// Presence, when set, serves the PresenceManager methods, typically a
	// *redis.Presence. The engine does not close it.
	Presence engine.PresenceManager `yaml:"-"`
	// TLS, when set, connects with TLS (nats.Secure); ServerName, when
	// empty, is the host of the URL.
	TLS *tls.Config `yaml:"-"`
	// ConnOptions are passed to nats.Connect after the engine's own, for
	// credentials and other settings.
	ConnOptions []nats.Option `yaml:"-"`

	PingInterval    time.Duration `yaml:"-"`
	ReconnectWait   time.Duration `yaml:"-"`
	DialTimeout     time.Duration `yaml:"-"`
	FlushTimeout    time.Duration `yaml:"-"`
	FragmentTimeout time.Duration `yaml:"-"`
	MaxMessageSize  int           `yaml:"-"`

	// Logger receives warnings (disconnects, messages dropped for slow
	// consumers); nil means slog.Default().
	Logger *slog.Logger `yaml:"-"`
}

var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

func (o Config) withDefaults() (Config, error) {
	if o.URL == "" {
		return o, errors.New("nats engine: URL is required")
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if len(o.Prefix) > 64 || !prefixPattern.MatchString(o.Prefix) {
		return o, fmt.Errorf("nats engine: prefix %q: want dot-separated tokens of letters, digits, '_' and '-'", o.Prefix)
	}
	id, err := precheck.NodeID(o.NodeID)
	if err != nil {
		return o, fmt.Errorf("nats engine: %w", err)
	}
	o.NodeID = id
	setDur(&o.PingInterval, DefaultPingInterval)
	setDur(&o.ReconnectWait, DefaultReconnectWait)
	setDur(&o.DialTimeout, DefaultDialTimeout)
	setDur(&o.FlushTimeout, DefaultFlushTimeout)
	setDur(&o.FragmentTimeout, DefaultFragmentTimeout)
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

func setDur(v *time.Duration, def time.Duration) {
	if *v <= 0 {
		*v = def
	}
}
