// Package config is the file format of `herald serve`: the YAML keys,
// their defaults and documentation (struct tags on the option types, see
// schema.go and doc.go), decoding with errors that name the key, the
// HERALD_ environment, validation, the example file and the reference
// tables of docs/configuration.md. It is the only package that reads YAML;
// package server takes a Config and wires the node.
package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/guard"
	"github.com/heraldhq/herald/transport/tlsconf"
	"github.com/heraldhq/herald/transport/websocket"
)

// Config is the whole configuration of `herald serve`; docs/configuration.md
// lists every key.
type Config struct {
	Address string `yaml:"address" default:":8000" doc:"where the HTTP server listens: WebSocket connections, the HTTP transports, the server API, '/metrics' and the health checks"`
	Name    string `yaml:"name" defaultdoc:"host name" doc:"this node's name in the info API and the logs; empty: the host name"`
	// PIDFile is written by the command that runs the node (cmd/herald).
	PIDFile string        `yaml:"pid_file" doc:"write the process ID to this file at start (mode 0600, as Centrifugo's 'pid_file'), and remove it on a clean shutdown; empty: none"`
	Log     LogConfig     `yaml:"log"`
	Engine  EngineConfig  `yaml:"engine"`
	Client  ClientConfig  `yaml:"client"`
	Channel ChannelConfig `yaml:"channel"`
	// ProxyConfig: proxies, proxy_max_in_flight and rpc (proxy.go).
	ProxyConfig `yaml:",inline"`
	// SharedPoll: the keys of shared poll channels' tracked key batches
	// (hub/sharedpoll_signature.go).
	SharedPoll hub.SharedPollConfig `yaml:"shared_poll"`
	// SQLAuth is where namespaces' SQL checks run (sqlauth.go).
	SQLAuth SQLAuthConfig `yaml:"sql_auth"`
	HTTPAPI HTTPAPIConfig `yaml:"http_api"`
	// GRPCAPIConfig is the gRPC server API (grpcapi.go).
	GRPCAPIConfig GRPCAPIConfig  `yaml:"grpc_api"`
	HTTP          HTTPConfig     `yaml:"http"`
	Shutdown      ShutdownConfig `yaml:"shutdown"`
	// The HTTP transports' keys (http_stream, sse, ...): transports.go.
	TransportsConfig `yaml:",inline"`
	// TLSConfig: tls and tls_autocert (tls.go).
	TLSConfig `yaml:",inline"`
	Admin     AdminConfig `yaml:"admin"`
	// Debug is Centrifugo's pprof endpoint (debug.go).
	Debug DebugConfig `yaml:"debug"`
	// Internal is the internal listener (internal.go).
	Internal     InternalConfig     `yaml:"internal"`
	WebSocket    WebSocketConfig    `yaml:"websocket"`
	UniWebSocket UniWebSocketConfig `yaml:"uni_websocket"`
	// WebTransport is the WebTransport transport (webtransport.go).
	WebTransport WebTransportConfig `yaml:"webtransport"`
	// UniGRPC is the unidirectional gRPC transport (unigrpc.go).
	UniGRPC UniGRPCConfig `yaml:"uni_grpc"`
	// OpenTelemetry turns tracing on (opentelemetry.go).
	OpenTelemetry OpenTelemetryConfig `yaml:"opentelemetry"`
	// ConsumerList: the asynchronous consumers (consumers.go).
	ConsumerList []ConsumerConfig `yaml:"consumers" doc:"asynchronous consumers of server API commands from a PostgreSQL outbox table, Redis Streams, NATS JetStream, Kafka, AWS SQS, Google Cloud Pub/Sub or Azure Service Bus, in Centrifugo's formats ([consumers.md](consumers.md)), a list with the keys below"`
	// Prometheus and Health: where the metrics and Centrifugo's health
	// endpoint are served (paths.go).
	Prometheus PrometheusConfig `yaml:"prometheus"`
	Health     HealthConfig     `yaml:"health"`
	// Init is Centrifugo's connection init endpoint (conninit.go).
	Init InitConfig `yaml:"init"`
	// Graphite pushes the same metrics to Graphite (graphite.go).
	Graphite GraphiteConfig `yaml:"graphite"`

	// centrifugo is what reading a Centrifugo file found beside the
	// configuration (centrifugo_report.go); no key of the file.
	centrifugo CentrifugoReport
	// Swagger serves the API's OpenAPI document (swagger.go).
	Swagger SwaggerConfig `yaml:"swagger"`
}

// LogConfig selects the log format and level.
type LogConfig struct {
	Level  string `yaml:"level" default:"info" doc:"'debug', 'info', 'warn' or 'error'"`
	Format string `yaml:"format" default:"text" doc:"'text' or 'json' (log/slog handlers)"`
	// File is opened by the command that runs the node (cmd/herald).
	File string `yaml:"file" doc:"write the log to this file (created if missing, appended to) instead of standard error, as Centrifugo's 'log.file'; reopened at each start, so rotate it with copytruncate"`
}

// ShutdownConfig shapes the graceful drain on SIGTERM or SIGINT.
type ShutdownConfig struct {
	DrainWindow time.Duration `yaml:"drain_window" default:"5s" doc:"on SIGTERM or SIGINT, clients are closed with 3001 spread over this window, so they reconnect elsewhere without a thundering herd; '/readyz' answers 503 and new connections are refused from the start"`
	Timeout     time.Duration `yaml:"timeout" default:"30s" doc:"the whole shutdown (drain, in-flight API calls, engine) must finish within this"`
}

// HTTPConfig tunes the HTTP server that carries WebSocket upgrades, the
// API, metrics and health checks.
type HTTPConfig struct {
	IdleTimeout time.Duration `yaml:"idle_timeout" default:"120s" doc:"a keep-alive connection that sends no new request for this long is closed, so that idle connections do not hold file descriptors for ever. Without TLS (and without 'websocket.net_http_upgrade') a new connection may also stay silent this long before its first request (HTTP clients open connections ahead of need, and Go's does not retry a request that fails on a connection's first use); once a request begins, its headers must arrive within 10 s. With TLS, or with 'websocket.net_http_upgrade', Go's HTTP server reads every request, and a new connection's first request must arrive within 10 s. WebSocket connections are not affected (they have 'client.ping_interval'). '0' means the default"`
	// NotSentLowat keeps what waits for a client in the node's queues, not
	// the kernel's (server/sockopt_unix.go).
	NotSentLowat int `yaml:"tcp_notsent_lowat" default:"65536" doc:"bytes that may wait unsent in the kernel's send buffer of one connection of the main listener (TCP_NOTSENT_LOWAT, Linux and macOS); past them its writer waits. A client that falls behind then waits in the node's write queue, where 'client.queue_max_size' and 'client.node_queue_max_size' see it and shed or drop, instead of in megabytes of socket buffer that the node cannot see: after an overload the node recovers in a second instead of several. Bytes already sent are not counted, so it does not limit a link's speed. '0': the kernel's default (no limit)"`
	// HTTP3 serves the main listener over QUIC too (webtransport.go).
	HTTP3 HTTP3Config `yaml:"http3"`
	// H2CExternal is Centrifugo's http_server.h2c_external (server/h2c.go).
	H2CExternal bool `yaml:"h2c_external" doc:"serve HTTP/2 without TLS (h2c, with prior knowledge) beside HTTP/1.1 on the main listener, for a proxy or load balancer that speaks h2c to Herald; needs 'internal.address' (the internal listener stays HTTP/1.1) and no TLS on the main listener, as Centrifugo's 'http_server.h2c_external'"`
}

// DefaultIdleTimeout is http.idle_timeout when it is 0.
const DefaultIdleTimeout = 120 * time.Second

// IdleTimeoutOrDefault is http.idle_timeout with its default applied.
func (c HTTPConfig) IdleTimeoutOrDefault() time.Duration {
	if c.IdleTimeout <= 0 {
		return DefaultIdleTimeout
	}
	return c.IdleTimeout
}

// HTTPAPIConfig configures the server API under /api (package api). Its
// options are api.Config's own, with their names, defaults and docs;
// the fields here are the server's wiring.
type HTTPAPIConfig struct {
	api.Config `yaml:",inline"`
	// Disabled and HandlerPrefix are wiring (the server mounts the API).
	Disabled      bool   `yaml:"disabled" doc:"serve no HTTP API at all, not even the '403' that explains how to turn it on (requests under 'handler_prefix' get '404')"`
	HandlerPrefix string `yaml:"handler_prefix" default:"/api" doc:"where the API is served: 'POST PREFIX/<method>' and the single endpoint 'POST PREFIX' with '{\"method\":…,\"params\":…}'"`
	// IdempotencyWindow is hub.Config.IdempotencyWindow.
	IdempotencyWindow time.Duration `yaml:"idempotency_window" default:"5m" doc:"how long 'publish', 'broadcast', 'map_publish' and 'map_remove' remember an 'idempotency_key', per channel and across the cluster: a repeat within the window returns the first result and delivers nothing (at most 24h)"`
	AllowedOrigins    []string      `yaml:"allowed_origins" doc:"browser origins allowed to call the API (CORS); '*' allows any"`
	External          bool          `yaml:"external" doc:"with 'internal.address': serve the API on the main listener, not the internal one (Centrifugo's 'http_api.external')"`
	RequireClientCert bool          `yaml:"require_client_cert" doc:"answer '/api/' requests '403' unless the connection presented a client certificate that verified against 'tls.client_ca_file' (mutual TLS for the API; set 'tls.client_auth: optional' so that clients without a certificate still reach the other endpoints)"`
}

// DefaultAPIPrefix is http_api.handler_prefix when it is empty.
const DefaultAPIPrefix = "/api"

// Prefix is http_api.handler_prefix without a trailing slash, with its
// default applied.
func (c HTTPAPIConfig) Prefix() string {
	p := strings.TrimSuffix(c.HandlerPrefix, "/")
	if p == "" {
		return DefaultAPIPrefix
	}
	return p
}

// BodyReadTimeoutOrDefault is http_api.body_read_timeout with its default
// applied.
func (c HTTPAPIConfig) BodyReadTimeoutOrDefault() time.Duration {
	if c.BodyReadTimeout <= 0 {
		return api.DefaultBodyReadTimeout
	}
	return c.BodyReadTimeout
}

// AdminConfig sets up the admin listener: pprof, off unless an address is
// given. Bind it to loopback or a private interface only.
type AdminConfig struct {
	Address string `yaml:"address" doc:"a separate listener with pprof ('/debug/pprof/') and '/metrics'; off when empty; bind it to loopback"`
	// MutexProfileFraction and BlockProfileRate turn on the runtime's lock
	// contention and blocking profiles. They cost CPU on every contended
	// lock and channel wait, so they are off unless a profile is taken.
	MutexProfileFraction int           `yaml:"mutex_profile_fraction" doc:"sample 1 in N contended lock acquisitions for '/debug/pprof/mutex' (0: off); needs 'admin.address'; costs CPU while on, so set it only to take a profile"`
	BlockProfileRate     int           `yaml:"block_profile_rate" doc:"record goroutine waits (channels, locks, 'select') of N nanoseconds or more for '/debug/pprof/block' (0: off); needs 'admin.address'; costs CPU while on"`
	UI                   AdminUIConfig `yaml:"ui"` // admin.go
	// TLS of the admin listener, with the same options as the main one.
	TLS tlsconf.Config `yaml:"tls"`
}

// WebSocketConfig tunes the WebSocket transport and the admission of new
// connections on every transport: the options of websocket.Config and
// guard.Config, tagged there, and the keys only the file has.
type WebSocketConfig struct {
	// WebSocketTransport: message_size_limit, the timeouts, poller and
	// compression.
	WebSocketTransport `yaml:",inline"`
	AllowedOrigins     []string `yaml:"allowed_origins" defaultdoc:"same origin" doc:"browser origins allowed to connect, e.g. 'https://app.example.com'; '*' allows any; empty: same origin only. Other origins get '403', and a warning naming the origin is logged (at most once a minute per origin)"`
	// ConnectionAdmission: the bounds on unauthenticated connections, the
	// per-address rate and the trusted proxies.
	ConnectionAdmission `yaml:",inline"`
	// HandlerPrefix and Disabled are wiring (the server mounts the
	// endpoint; paths.go).
	HandlerPrefix string `yaml:"handler_prefix" default:"/connection/websocket" doc:"the path of the WebSocket endpoint, as Centrifugo's; clients connect to 'ws://HOST:PORT' followed by it"`
	Disabled      bool   `yaml:"disabled" doc:"serve no bidirectional WebSocket endpoint (Centrifugo's 'websocket.disabled'), for nodes that serve only the HTTP or unidirectional transports; the other options of this section still apply to them"`
	// WebSocketAcceptConfig: net_http_upgrade (accept.go).
	WebSocketAcceptConfig `yaml:",inline"`
}

// WebSocketTransport and ConnectionAdmission name the library types
// WebSocketConfig embeds, which are both called Config in their packages.
type (
	WebSocketTransport  = websocket.Config
	ConnectionAdmission = guard.Config
)

// UniWebSocketConfig configures the unidirectional WebSocket endpoint,
// /connection/uni_websocket. It shares the websocket section's origins,
// admission and read path, and has its own size limit, write timeout and
// compression, as Centrifugo's.
type UniWebSocketConfig struct {
	Enabled       bool   `yaml:"enabled" doc:"serve the unidirectional WebSocket endpoint at 'uni_websocket.handler_prefix' ('/connection/uni_websocket') (the client sends one connect request and then only receives; see [protocol.md](protocol.md#unidirectional-websocket)). It shares the 'websocket' section's allowed origins, admission limits, read timeout and poller; the keys below set the rest"`
	HandlerPrefix string `yaml:"handler_prefix" default:"/connection/uni_websocket" doc:"the path of the unidirectional WebSocket endpoint"`
	// The options Centrifugo gives the unidirectional WebSocket of its own
	// (v6.9.1 configtypes.UniWebSocket); UniTransport applies them over the
	// websocket section's.
	MessageSizeLimit        int64         `yaml:"message_size_limit" defaultdoc:"'websocket.message_size_limit'" doc:"largest incoming message (the connect request) in bytes; '0': the websocket section's"`
	WriteTimeout            time.Duration `yaml:"write_timeout" defaultdoc:"'websocket.write_timeout'" doc:"as 'websocket.write_timeout', for this endpoint; '0': the websocket section's"`
	Compression             bool          `yaml:"compression" doc:"accept permessage-deflate on this endpoint, as 'websocket.compression' does on the bidirectional one (each decides for its own endpoint, as in Centrifugo)"`
	CompressionMinSize      int           `yaml:"compression_min_size" doc:"as 'websocket.compression_min_size', for this endpoint"`
	CompressionLevel        int           `yaml:"compression_level" defaultdoc:"'websocket.compression_level'" doc:"as 'websocket.compression_level', for this endpoint; '0': the websocket section's"`
	JoinPushMessages        bool          `yaml:"join_push_messages" doc:"send the pushes that are ready together in one text frame, separated by newlines, instead of one frame each (fewer frames and system calls; the client must split frames on newlines), as Centrifugo's"`
	DisableDisconnectPush   bool          `yaml:"disable_disconnect_push" doc:"close a connection with the WebSocket close frame alone, without the disconnect push before it, as Centrifugo's"`
	ReadBufferSize          int           `yaml:"read_buffer_size" defaultdoc:"'websocket.read_buffer_size'" doc:"as 'websocket.read_buffer_size', for this endpoint's connections (portable poller only); '0': the websocket section's"`
	DisableClosingHandshake bool          `yaml:"disable_closing_handshake" doc:"close a connection by closing its TCP connection, without the WebSocket close frame (the disconnect push is still sent unless 'disable_disconnect_push'), as Centrifugo's"`
}

// UniTransport is the unidirectional WebSocket's transport options: the
// websocket section's, with this section's set over them.
func (c Config) UniTransport() websocket.Config {
	t, u := c.WebSocket.Transport(), c.UniWebSocket
	if u.MessageSizeLimit > 0 {
		t.MaxMessageSize = u.MessageSizeLimit
	}
	if u.WriteTimeout > 0 {
		t.WriteTimeout = u.WriteTimeout
	}
	t.Compression, t.CompressionMinSize = u.Compression, u.CompressionMinSize
	if u.CompressionLevel > 0 {
		t.CompressionLevel = u.CompressionLevel
	}
	if u.ReadBufferSize > 0 {
		t.ReadBufferSize = u.ReadBufferSize
	}
	t.UniJoinPushes = u.JoinPushMessages
	t.UniNoDisconnectPush, t.UniNoClosingHandshake = u.DisableDisconnectPush, u.DisableClosingHandshake
	return t
}

// Default is the configuration `herald serve` runs with when given no
// file: every option at its default tag.
func Default() Config {
	var c Config
	applyDefaults(reflect.ValueOf(&c).Elem())
	return c
}

// Load reads a YAML configuration file over the defaults. Unknown keys
// and values of the wrong type are errors that name the key, so a
// misspelt option is never silently ignored. It does not Validate: apply
// the environment and flags first.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse reads YAML configuration over the defaults.
func Parse(data []byte) (Config, error) {
	cfg := Default()
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Config{}, fmt.Errorf("not valid YAML: %w", err)
	}
	if ps := decodeNode(&root, reflect.ValueOf(&cfg).Elem(), ""); len(ps) > 0 {
		return Config{}, ps
	}
	return cfg, nil
}
