package server

import (
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/websocket"
)

// Config is the whole configuration of `herald serve`. Its file format is
// YAML; docs/configuration.md lists every key.
type Config struct {
	// Address is where the HTTP server listens: WebSocket connections and
	// (later) the server API.
	Address string `yaml:"address"`
	// Name names this node; default the host name.
	Name string    `yaml:"name"`
	Log  LogConfig `yaml:"log"`
	// Client holds connection settings and the token keys.
	Client    ClientConfig    `yaml:"client"`
	Channel   ChannelConfig   `yaml:"channel"`
	WebSocket WebSocketConfig `yaml:"websocket"`
	// UniWebSocket is the unidirectional WebSocket endpoint.
	UniWebSocket UniWebSocketConfig `yaml:"uni_websocket"`
	Engine       EngineConfig       `yaml:"engine"`
	Admin        AdminConfig        `yaml:"admin"`
	HTTP         HTTPConfig         `yaml:"http"`
	HTTPAPI      HTTPAPIConfig      `yaml:"http_api"`
	Shutdown     ShutdownConfig     `yaml:"shutdown"`
	// The HTTP transports' keys (http_stream, sse, ...): config_transports.go.
	TransportsConfig `yaml:",inline"`
	// ProxyConfig: proxies, proxy_max_in_flight and rpc (config_proxy.go).
	ProxyConfig `yaml:",inline"`
	// SQLAuth is where namespaces' SQL checks run (config_sqlauth.go).
	SQLAuth SQLAuthConfig `yaml:"sql_auth"`
}

// ShutdownConfig shapes the graceful drain on SIGTERM or SIGINT.
type ShutdownConfig struct {
	// DrainWindow spreads closing the clients (with 3001) over this long,
	// so they reconnect elsewhere without a thundering herd (5s).
	DrainWindow Duration `yaml:"drain_window"`
	// Timeout bounds the whole shutdown (30s).
	Timeout Duration `yaml:"timeout"`
}

// HTTPConfig tunes the HTTP server that carries WebSocket upgrades, the
// API, metrics and health checks.
type HTTPConfig struct {
	// IdleTimeout closes a keep-alive connection that sends no new request
	// for this long (120s; 0 means the default), so that idle connections
	// do not hold file descriptors for ever.
	IdleTimeout Duration `yaml:"idle_timeout"`
}

// Defaults of the limits below; docs/operations.md lists them all.
const (
	DefaultIdleTimeout      = 120 * time.Second
	DefaultBodyReadTimeout  = api.DefaultBodyReadTimeout
	DefaultMaxBatchCommands = api.DefaultMaxBatchCommands
	// DefaultMaxBatchResponseSize bounds the replies of one batch.
	DefaultMaxBatchResponseSize = api.DefaultMaxBatchResponseSize
)

// idleTimeout is http.idle_timeout with its default applied.
func (c HTTPConfig) idleTimeout() time.Duration {
	if c.IdleTimeout <= 0 {
		return DefaultIdleTimeout
	}
	return c.IdleTimeout.D()
}

// bodyReadTimeout is http_api.body_read_timeout with its default applied.
func (c HTTPAPIConfig) bodyReadTimeout() time.Duration {
	if c.BodyReadTimeout <= 0 {
		return DefaultBodyReadTimeout
	}
	return c.BodyReadTimeout.D()
}

// HTTPAPIConfig configures the server API under /api.
type HTTPAPIConfig struct {
	// Key is the API key backends send in X-API-Key (or Authorization:
	// apikey KEY). Without a key the API is off, unless Insecure.
	Key string `yaml:"key"`
	// Insecure turns the API on without a key. Development only.
	Insecure bool `yaml:"insecure"`
	// ErrorMode "transport" answers errors with HTTP statuses instead of
	// 200 with an error object.
	ErrorMode string `yaml:"error_mode"`
	// MaxBodySize bounds a request body in bytes (1 MiB).
	MaxBodySize int64 `yaml:"max_body_size"`
	// BodyReadTimeout bounds the time a request's body may take to arrive,
	// from the start of the request's handling (10s; 0 means the default),
	// so that a caller cannot hold a connection by trickling a body. It
	// also bounds bodies sent to the other endpoints, which read none.
	BodyReadTimeout Duration `yaml:"body_read_timeout"`
	// MaxBatchCommands bounds the commands of one batch request (1000; 0
	// means the default): a small batch must not buy a huge reply.
	MaxBatchCommands int `yaml:"max_batch_commands"`
	// MaxBatchResponseSize bounds the replies of one batch in bytes (16
	// MiB; 0 means the default): past it the remaining replies are error
	// 106 and their commands do not run.
	MaxBatchResponseSize int64 `yaml:"max_batch_response_size"`
	// AllowKeyInQuery also accepts the key as ?api_key=KEY. Off by
	// default: URLs, and the key with them, end up in access logs.
	AllowKeyInQuery bool `yaml:"allow_key_in_query"`
	// IdempotencyWindow is how long publish and broadcast remember an
	// idempotency_key (5m): a repeat within it is not delivered again.
	IdempotencyWindow Duration `yaml:"idempotency_window"`
	// AllowedOrigins lists browser origins allowed to call the API (CORS);
	// "*" allows any. Empty: no CORS headers.
	AllowedOrigins []string `yaml:"allowed_origins"`
}

// AdminConfig sets up the admin listener: pprof, off unless an address is
// given. Bind it to loopback or a private interface only.
type AdminConfig struct {
	Address string        `yaml:"address"`
	UI      AdminUIConfig `yaml:"ui"` // config_admin.go
	// MutexProfileFraction and BlockProfileRate turn on the runtime's lock
	// contention and blocking profiles (/debug/pprof/mutex and /block) on
	// the admin listener: 1 in MutexProfileFraction contention events is
	// sampled, and blocking events of BlockProfileRate nanoseconds or more.
	// They cost CPU on every contended lock and channel wait, so they are
	// off (0) unless a profile is being taken.
	MutexProfileFraction int `yaml:"mutex_profile_fraction"`
	BlockProfileRate     int `yaml:"block_profile_rate"`
}

// LogConfig selects the log format and level.
type LogConfig struct {
	// Level is debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is text or json.
	Format string `yaml:"format"`
}

// TokenConfig holds the keys that connection and subscription JWTs are
// checked with.
type TokenConfig struct {
	HMACSecretKey  string `yaml:"hmac_secret_key"`
	RSAPublicKey   string `yaml:"rsa_public_key"`
	ECDSAPublicKey string `yaml:"ecdsa_public_key"`
	Audience       string `yaml:"audience"`
	Issuer         string `yaml:"issuer"`
	// TokenCacheConfig: cache_size (config_accept.go).
	TokenCacheConfig `yaml:",inline"`
}

func (t TokenConfig) auth() auth.Config {
	return auth.Config{
		HMACSecretKey: t.HMACSecretKey, RSAPublicKey: t.RSAPublicKey, ECDSAPublicKey: t.ECDSAPublicKey,
		Audience: t.Audience, Issuer: t.Issuer, ConnectTokenCacheSize: t.CacheSize,
	}
}

// Configured reports whether any token key is set.
func (t TokenConfig) Configured() bool {
	return t.HMACSecretKey != "" || t.RSAPublicKey != "" || t.ECDSAPublicKey != ""
}

// WebSocketConfig tunes the WebSocket transport.
type WebSocketConfig struct {
	// MessageSizeLimit bounds an incoming message, in bytes (65536).
	MessageSizeLimit int64 `yaml:"message_size_limit"`
	// WriteTimeout bounds one write to a client (1s).
	WriteTimeout Duration `yaml:"write_timeout"`
	// ReadTimeout bounds how long a started message may take to arrive (10s).
	ReadTimeout Duration `yaml:"read_timeout"`
	// AllowedOrigins lists the browser origins allowed to connect; empty
	// means same-origin only, "*" any.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// Poller is how connections are read: "auto" (epoll on Linux,
	// portable elsewhere), "epoll" (Linux only) or "portable" (a goroutine
	// per connection). Empty means auto.
	Poller string `yaml:"poller"`
	// MaxUnauthenticated bounds the connections of this node that have not
	// authenticated (sent a successful connect) yet; over it, upgrades are
	// answered 503 (10000). -1 turns the bound off.
	MaxUnauthenticated int `yaml:"max_unauthenticated"`
	// IPRateLimit is how many new connections per second one client
	// address may open (an IPv6 address counts by its /64); over it,
	// upgrades are answered 429 (1000). -1 turns the limit off.
	IPRateLimit float64 `yaml:"ip_rate_limit"`
	// IPRateBurst is how many connections one address may open at once
	// above IPRateLimit (twice IPRateLimit).
	IPRateBurst int `yaml:"ip_rate_burst"`
	// TrustedProxies lists the addresses or CIDR prefixes of reverse
	// proxies in front of the node. A connection from one of them counts
	// against the address its X-Forwarded-For header names (the rightmost
	// one that is not itself a trusted proxy); from anywhere else the
	// header is ignored. Empty: the TCP peer's address always.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// Compression accepts permessage-deflate from clients that offer it,
	// without context takeover (false).
	Compression bool `yaml:"compression"`
	// CompressionMinSize is the smallest outgoing message compressed, in
	// bytes (0: all).
	CompressionMinSize int `yaml:"compression_min_size"`
	// CompressionLevel is the deflate level, 1 (fastest) to 9 (smallest)
	// (1).
	CompressionLevel int `yaml:"compression_level"`
	// WebSocketAcceptConfig: net_http_upgrade (config_accept.go).
	WebSocketAcceptConfig `yaml:",inline"`
}

// UniWebSocketConfig configures the unidirectional WebSocket endpoint,
// /connection/uni_websocket. It shares the websocket section's limits,
// origins, admission and compression.
type UniWebSocketConfig struct {
	// Enabled serves the endpoint (false, as in Centrifugo).
	Enabled bool `yaml:"enabled"`
}

// DefaultConfig is the configuration `herald serve` runs with when given
// no file.
func DefaultConfig() Config {
	return Config{
		Address: ":8000",
		Log:     LogConfig{Level: "info", Format: "text"},
		Client:  ClientConfig{Token: TokenConfig{TokenCacheConfig: TokenCacheConfig{CacheSize: DefaultTokenCacheSize}}},
		Engine:  EngineConfig{Type: "memory"},
		HTTP:    HTTPConfig{IdleTimeout: Duration(DefaultIdleTimeout)},
		HTTPAPI: HTTPAPIConfig{
			BodyReadTimeout:      Duration(DefaultBodyReadTimeout),
			MaxBatchCommands:     DefaultMaxBatchCommands,
			MaxBatchResponseSize: DefaultMaxBatchResponseSize,
			IdempotencyWindow:    Duration(hub.DefaultIdempotencyWindow),
		},
		Shutdown: ShutdownConfig{
			DrainWindow: Duration(5 * time.Second),
			Timeout:     Duration(30 * time.Second),
		},
		TransportsConfig: defaultTransportsConfig(),
	}
}

// LoadConfig reads a YAML configuration file over the defaults. Unknown
// keys and values of the wrong type are errors that name the key, so a
// misspelt option is never silently ignored. It does not Validate: apply
// environment and flags first.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig reads YAML configuration over the defaults.
func ParseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Config{}, fmt.Errorf("not valid YAML: %w", err)
	}
	if ps := checkNode(&root, reflect.TypeOf(cfg), ""); len(ps) > 0 {
		return Config{}, ps
	}
	if len(root.Content) > 0 {
		if err := root.Decode(&cfg); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

// Validate checks what the types alone cannot. It reports every problem
// it finds, each naming its key.
func (c Config) Validate() error {
	var ps Problems
	bad := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: key, Message: fmt.Sprintf(format, args...)})
	}
	history, presence, ok := c.engineCaps()
	if !ok {
		bad("engine.type", "unknown engine %q (available: %s)", c.Engine.Type, strings.Join(slices.Sorted(maps.Keys(engines)), ", "))
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "%q: want debug, info, warn or error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format", "%q: want text or json", c.Log.Format)
	}
	if c.WebSocket.MessageSizeLimit < 0 {
		bad("websocket.message_size_limit", "%d: must not be negative", c.WebSocket.MessageSizeLimit)
	}
	if _, err := websocket.Poller(c.WebSocket.Poller).Resolve(); err != nil {
		bad("websocket.poller", "%v", err)
	}
	if c.WebSocket.MaxUnauthenticated < -1 {
		bad("websocket.max_unauthenticated", "%d: want a positive number, 0 for the default or -1 for no bound", c.WebSocket.MaxUnauthenticated)
	}
	if r := c.WebSocket.IPRateLimit; r < 0 && r != -1 || math.IsNaN(r) || math.IsInf(r, 0) {
		bad("websocket.ip_rate_limit", "%v: want connections per second, 0 for the default or -1 for no limit", r)
	}
	if _, err := parseTrustedProxies(c.WebSocket.TrustedProxies); err != nil {
		bad("websocket.trusted_proxies", "%v", err)
	}
	if c.WebSocket.IPRateBurst < 0 {
		bad("websocket.ip_rate_burst", "%d: must not be negative", c.WebSocket.IPRateBurst)
	}
	if l := c.WebSocket.CompressionLevel; l != 0 && (l < websocket.MinCompressionLevel || l > websocket.MaxCompressionLevel) {
		bad("websocket.compression_level", "%d: want %d (fastest) to %d (smallest), or 0 for the default", l, websocket.MinCompressionLevel, websocket.MaxCompressionLevel)
	}
	if c.WebSocket.CompressionMinSize < 0 {
		bad("websocket.compression_min_size", "%d: must not be negative", c.WebSocket.CompressionMinSize)
	}
	if c.Client.ChannelLimit < 0 {
		bad("client.channel_limit", "%d: must not be negative", c.Client.ChannelLimit)
	}
	if c.Admin.MutexProfileFraction < 0 {
		bad("admin.mutex_profile_fraction", "%d: must not be negative", c.Admin.MutexProfileFraction)
	}
	if c.Admin.BlockProfileRate < 0 {
		bad("admin.block_profile_rate", "%d: must not be negative", c.Admin.BlockProfileRate)
	}
	if (c.Admin.MutexProfileFraction > 0 || c.Admin.BlockProfileRate > 0) && c.Admin.Address == "" {
		bad("admin.address", "must be set for admin.mutex_profile_fraction or admin.block_profile_rate: the profiles are served on the admin listener")
	}
	if c.Client.QueueMaxSize < 0 {
		bad("client.queue_max_size", "%d: must not be negative", c.Client.QueueMaxSize)
	}
	if d := c.Client.WriteCoalesce.D(); d < 0 || d > time.Second {
		bad("client.write_coalesce", "%s: want 0 (off) to 1s; a few milliseconds is typical", d)
	}
	if c.Client.PingInterval > 0 && c.Client.PongTimeout > 0 && c.Client.PongTimeout >= c.Client.PingInterval {
		bad("client.pong_timeout", "%s must be shorter than client.ping_interval (%s)", c.Client.PongTimeout, c.Client.PingInterval)
	}
	if c.Shutdown.Timeout > 0 && c.Shutdown.DrainWindow >= c.Shutdown.Timeout {
		bad("shutdown.drain_window", "%s must be shorter than shutdown.timeout (%s)", c.Shutdown.DrainWindow, c.Shutdown.Timeout)
	}
	if err := c.Channel.hub().Validate(); err != nil {
		bad("channel", "%v", err)
	}
	c.Admin.UI.validate(bad)
	for key, ns := range c.namespaces() {
		if ok && !history {
			for _, o := range historyOptions(ns) {
				bad(key+"."+o, "engine %q keeps no history, so channels cannot have history, positioning or recovery (use the redis, postgres or memory engine)", c.Engine.Type)
			}
		}
		if ok && !presence && ns.Presence {
			bad(key+".presence", "engine %q keeps no presence (set engine.nats.presence: redis, or use another engine)", c.Engine.Type)
		}
		switch hub.QueuePolicy(ns.QueuePolicy) {
		case "", hub.QueueClose, hub.QueueDropOldest:
		default:
			bad(key+".queue_policy", "%q: want %s or %s", ns.QueuePolicy, hub.QueueClose, hub.QueueDropOldest)
		}
		if ns.JoinLeaveMaxSubscribers < -1 {
			bad(key+".join_leave_max_subscribers", "%d: want -1 (no bound), 0 (the default, %d) or a positive number", ns.JoinLeaveMaxSubscribers, hub.DefaultJoinLeaveMaxSubscribers)
		}
		switch hub.DataFormat(ns.PublicationDataFormat) {
		case "", hub.DataFormatJSON, hub.DataFormatJSONObject, hub.DataFormatBinary:
		default:
			bad(key+".publication_data_format", "%q: want %s, %s or %s", ns.PublicationDataFormat, hub.DataFormatJSON, hub.DataFormatJSONObject, hub.DataFormatBinary)
		}
		for i, dt := range ns.AllowedDeltaTypes {
			if dt != hub.DeltaFossil {
				bad(fmt.Sprintf("%s.allowed_delta_types[%d]", key, i), "%q: want %s", dt, hub.DeltaFossil)
			}
		}
	}
	if c.Engine.Type == "postgres" && c.Engine.Postgres.DSN == "" {
		bad("engine.postgres.dsn", "required with engine.type postgres, e.g. postgres://user:pass@host:5432/db")
	}
	switch c.Engine.NATS.Presence {
	case "", "none", "redis":
	default:
		bad("engine.nats.presence", "%q: want none or redis", c.Engine.NATS.Presence)
	}
	switch c.HTTPAPI.ErrorMode {
	case "", "transport":
	default:
		bad("http_api.error_mode", "%q: want \"\" or \"transport\"", c.HTTPAPI.ErrorMode)
	}
	if c.HTTPAPI.MaxBodySize < 0 {
		bad("http_api.max_body_size", "%d: must not be negative", c.HTTPAPI.MaxBodySize)
	}
	if c.HTTPAPI.MaxBatchCommands < 0 {
		bad("http_api.max_batch_commands", "%d: must not be negative (0 means the default, %d)", c.HTTPAPI.MaxBatchCommands, DefaultMaxBatchCommands)
	}
	if c.HTTPAPI.MaxBatchResponseSize < 0 {
		bad("http_api.max_batch_response_size", "%d: must not be negative (0 means the default, %d)", c.HTTPAPI.MaxBatchResponseSize, DefaultMaxBatchResponseSize)
	}
	if w := c.HTTPAPI.IdempotencyWindow; w < 0 || w.D() > 24*time.Hour {
		bad("http_api.idempotency_window", "%s: want 0 (the default, %s) to 24h", w, hub.DefaultIdempotencyWindow)
	}
	if c.HTTPAPI.BodyReadTimeout < 0 {
		bad("http_api.body_read_timeout", "%s: must not be negative (0 means the default, %s)", c.HTTPAPI.BodyReadTimeout, DefaultBodyReadTimeout)
	}
	if c.HTTP.IdleTimeout < 0 {
		bad("http.idle_timeout", "%s: must not be negative (0 means the default, %s)", c.HTTP.IdleTimeout, DefaultIdleTimeout)
	}
	ps = append(ps, c.TransportsConfig.problems()...)
	c.Client.Token.validate(bad)
	if c.Client.Token.Configured() && c.Client.Token.CacheSize >= 0 {
		if _, err := auth.NewVerifier(c.Client.Token.auth()); err != nil {
			bad("client.token", "%v", err)
		}
	}
	ps = append(ps, c.proxyProblems()...)
	ps = append(ps, c.sqlAuthProblems()...)
	if len(ps) > 0 {
		return ps
	}
	return nil
}

// AuthUnconfigured reports whether nothing about authentication is set:
// no token key, no API key, no connect proxy, and neither anonymous nor
// insecure access.
// Such a node would refuse every connection and keep its API off, so
// `herald serve` generates keys for the run instead (see
// docs/configuration.md), and Warnings says so for `herald config check`
// and `herald serve` alike.
func (c Config) AuthUnconfigured() bool {
	return !c.Client.Token.Configured() && c.HTTPAPI.Key == "" && !c.HTTPAPI.Insecure &&
		!c.Client.Insecure && !c.Client.AllowAnonymousConnectWithoutToken && c.Client.Proxy.Connect == ""
}

// Warnings lists settings that are valid but probably not what is meant.
func (c Config) Warnings() []string {
	var w []string
	if c.AuthUnconfigured() {
		// One warning for both keys: serve treats this case as a whole.
		w = append(w, "client.token and http_api.key: no keys are configured: `herald serve` generates random ones "+
			"at each start and prints them (with --ephemeral-keys=false it refuses every connection and keeps the API off); "+
			"`herald config init` writes a configuration file with permanent keys")
		return w
	}
	if !c.Client.Token.Configured() && !c.Client.AllowAnonymousConnectWithoutToken && !c.Client.Insecure && c.Client.Proxy.Connect == "" {
		w = append(w, "client.token: no key is configured, so every connection will be refused: set client.token.hmac_secret_key (or a public key), or allow anonymous access")
	}
	if c.HTTPAPI.Key == "" && !c.HTTPAPI.Insecure {
		w = append(w, "http_api.key is empty: the server API under /api is off")
	}
	if c.HTTPAPI.Insecure {
		w = append(w, "http_api.insecure is on: anyone who reaches the server can publish and disconnect users")
	}
	if c.Client.Insecure {
		w = append(w, "client.insecure is on: every client may connect and use every channel; never use it in production")
	}
	return w
}

// namespaces maps each namespace's key path to its options.
func (c Config) namespaces() map[string]NamespaceOptions {
	out := map[string]NamespaceOptions{"channel.without_namespace": c.Channel.WithoutNamespace}
	for i, ns := range c.Channel.Namespaces {
		out[fmt.Sprintf("channel.namespaces[%d]", i)] = ns.NamespaceOptions
	}
	return out
}

// historyOptions names the options of ns that need an engine with history.
func historyOptions(ns NamespaceOptions) []string {
	var out []string
	for _, o := range []struct {
		name string
		on   bool
	}{
		{"history_size", ns.HistorySize > 0}, {"history_ttl", ns.HistoryTTL > 0}, {"history_meta_ttl", ns.HistoryMetaTTL > 0},
		{"force_positioning", ns.ForcePositioning}, {"allow_positioning", ns.AllowPositioning},
		{"force_recovery", ns.ForceRecovery}, {"allow_recovery", ns.AllowRecovery},
	} {
		if o.on {
			out = append(out, o.name)
		}
	}
	return out
}
