package grpcapi

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/optionerr"
)

// Defaults of the Config fields left at zero. They give the gRPC API the
// HTTP API's posture: a request as large as an HTTP API body, the same
// time for it to arrive, and bounds on what one client holds open.
const (
	// DefaultMaxReceiveMessageSize is the HTTP API's body limit, 1 MiB.
	// Centrifugo keeps grpc-go's 4 MiB; a message at the limit is
	// held whole before it is decoded, so the smaller bound is the safer.
	DefaultMaxReceiveMessageSize = api.DefaultMaxBodySize
	// DefaultReadTimeout is the HTTP API's body read timeout.
	DefaultReadTimeout = api.DefaultBodyReadTimeout
	// DefaultIdleTimeout closes a connection that has had no call for
	// this long.
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultSendTimeout closes a connection whose client took none of
	// its pending responses for this long.
	DefaultSendTimeout = 10 * time.Second
	// DefaultMaxConcurrentStreams bounds the calls in flight on one
	// connection (HTTP/2 streams).
	DefaultMaxConcurrentStreams = 100
	// DefaultMaxConnectionsPerAddress bounds the connections one client
	// IP address holds open.
	DefaultMaxConnectionsPerAddress = 100
)

// maxHeaderListSize bounds a call's headers (its metadata). grpc-go's
// default, 16 MiB, lets a client make each connection hold that much
// before the key is checked; an API call's metadata is the key, a
// traceparent and the error mode.
const maxHeaderListSize = 64 << 10

// Keepalive policy, fixed: a silent peer of an open connection is pinged
// after keepaliveTime and dropped when it does not answer within
// keepaliveTimeout; a client pinging more often than keepaliveMinTime is
// sent GOAWAY, so pings cannot be used to keep the server busy.
const (
	keepaliveTime    = time.Minute
	keepaliveTimeout = 20 * time.Second
	keepaliveMinTime = 10 * time.Second
)

// Config configures the gRPC API server. It is also the grpc_api section
// of the configuration file (package config inlines it): the yaml,
// default and doc tags are the file's key, default and documentation.
type Config struct {
	// Key is the API key callers send as "authorization: apikey <KEY>";
	// required unless Insecure.
	Key string `yaml:"key" doc:"the API key callers send as the metadata 'authorization: apikey KEY'; required with 'grpc_api.enabled' unless 'http_api.insecure' is on (Herald serves no unauthenticated gRPC API, where Centrifugo would)"`
	// Insecure accepts calls without a key. For development only.
	Insecure bool `yaml:"-"`
	// ErrorMode is "" (errors inside responses, with status OK) or
	// "transport" (errors as gRPC statuses: 100 Internal, 102 and 104
	// NotFound, 107 and 108 InvalidArgument, 112 OutOfRange, 113
	// AlreadyExists, any other Internal). A call can ask for the transport
	// mode with the metadata "x-centrifugo-error-mode: transport". Batch
	// replies keep their errors either way.
	ErrorMode string `yaml:"error_mode" doc:"'transport': a response's error as a gRPC status (100 INTERNAL, 102 and 104 NOT_FOUND, 107 and 108 INVALID_ARGUMENT, 112 OUT_OF_RANGE, 113 ALREADY_EXISTS) instead of inside the response with OK; a call can ask for it with the metadata 'x-centrifugo-error-mode: transport'"`
	// Reflection serves the gRPC reflection service, so that tools such as
	// grpcurl can list and call the methods without api.proto. It is
	// behind the key like every method.
	Reflection bool `yaml:"reflection" doc:"serve the gRPC reflection service, so that tools such as grpcurl list and call the methods without 'api.proto'; it needs the key like every method"`
	// MaxReceiveMessageSize bounds one request message in bytes; a larger
	// one is refused with ResourceExhausted before it is decoded. Zero
	// means DefaultMaxReceiveMessageSize.
	MaxReceiveMessageSize int `yaml:"max_receive_message_size" default:"1048576" doc:"largest request message in bytes, as 'http_api.max_body_size'; a larger one is refused with the gRPC status RESOURCE_EXHAUSTED when its length prefix arrives, before it is read. '0' means the default (1 MiB; Centrifugo's default is grpc-go's 4 MiB: raise it to match)"`
	// ReadTimeout bounds how long a call's request message may take to
	// arrive, from its headers; a call still waiting for it then ends
	// with DeadlineExceeded and its stream is reset. It also bounds the
	// TLS and HTTP/2 handshake of a new connection.
	ReadTimeout time.Duration `yaml:"read_timeout" default:"10s" doc:"longest a call's request message may take to arrive, from the call's headers (as 'http_api.body_read_timeout'); a call still waiting then ends with DEADLINE_EXCEEDED and its stream is reset. It also bounds a new connection's TLS and HTTP/2 handshake. '0' means the default"`
	// SendTimeout closes a connection whose client has taken nothing of
	// the responses pending for it for this long (sendwatch.go).
	SendTimeout time.Duration `yaml:"send_timeout" default:"10s" doc:"a connection whose client has taken none of the responses pending for it for this long is closed, freeing them (a client reading slowly but steadily is not cut). '0' means the default"`
	// IdleTimeout closes a connection without calls for this long.
	IdleTimeout time.Duration `yaml:"idle_timeout" default:"5m" doc:"a connection with no call in flight for this long is closed (with GOAWAY; clients reconnect on their next call). Open connections are also pinged after a minute of silence and dropped when the peer does not answer in 20s, and a client pinging more often than every 10s is disconnected. '0' means the default"`
	// MaxConcurrentStreams bounds the calls in flight on one connection.
	MaxConcurrentStreams int `yaml:"max_concurrent_streams" default:"100" doc:"most calls (HTTP/2 streams) in flight on one connection; the client is told in its settings, and a stream over it is refused (REFUSED_STREAM) before its message is read. '0' means the default"`
	// MaxConnectionsPerAddress bounds the connections one client IP
	// address holds; -1 means no bound.
	MaxConnectionsPerAddress int `yaml:"max_connections_per_address" default:"100" doc:"most connections one client IP address (an IPv6 address by its '/64') may hold open; a connection over it is closed as soon as it is accepted. '0' means the default; '-1': no bound (behind a proxy that hides client addresses)"`
	// TLS, when set, makes the server speak TLS only. Its NextProtos is
	// set to h2 by grpc-go.
	TLS *tls.Config `yaml:"-"`
	// API configures the methods: MaxBatchCommands, Logger and
	// TracerProvider are used (see api.Config).
	API api.Config `yaml:"-"`
}

// Validate reports the fields that have no meaning, each an
// *hub.OptionError naming the Go field (see hub.OptionErrors), so that a
// configuration layer can name its own keys. A missing Key is not one of
// them: New refuses it, and a server may leave the API off instead.
func (c Config) Validate() error {
	var errs optionerr.List
	if c.ReadTimeout < 0 {
		errs.Add("ReadTimeout", "%s: must not be negative (0 means the default, %s)", c.ReadTimeout, DefaultReadTimeout)
	}
	if c.SendTimeout < 0 {
		errs.Add("SendTimeout", "%s: must not be negative (0 means the default, %s)", c.SendTimeout, DefaultSendTimeout)
	}
	if c.IdleTimeout < 0 {
		errs.Add("IdleTimeout", "%s: must not be negative (0 means the default, %s)", c.IdleTimeout, DefaultIdleTimeout)
	}
	if c.MaxConcurrentStreams < 0 || int64(c.MaxConcurrentStreams) > math.MaxUint32 {
		errs.Add("MaxConcurrentStreams", "%d: want 0 (the default, %d) to %d", c.MaxConcurrentStreams, DefaultMaxConcurrentStreams, uint32(math.MaxUint32))
	}
	if c.MaxConnectionsPerAddress < -1 {
		errs.Add("MaxConnectionsPerAddress", "%d: want -1 (no bound), 0 (the default, %d) or more", c.MaxConnectionsPerAddress, DefaultMaxConnectionsPerAddress)
	}
	if c.MaxReceiveMessageSize < 0 {
		errs.Add("MaxReceiveMessageSize", "%d: must not be negative (0 means the default, %d)", c.MaxReceiveMessageSize, DefaultMaxReceiveMessageSize)
	}
	switch c.ErrorMode {
	case "", ErrorModeTransport:
	default:
		errs.Add("ErrorMode", "%q: want \"\" or %q", c.ErrorMode, ErrorModeTransport)
	}
	return errs.Err()
}

// withDefaults fills the fields left at zero.
func (c Config) withDefaults() Config {
	if c.MaxReceiveMessageSize == 0 {
		c.MaxReceiveMessageSize = DefaultMaxReceiveMessageSize
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.SendTimeout == 0 {
		c.SendTimeout = DefaultSendTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxConcurrentStreams == 0 {
		c.MaxConcurrentStreams = DefaultMaxConcurrentStreams
	}
	if c.MaxConnectionsPerAddress == 0 {
		c.MaxConnectionsPerAddress = DefaultMaxConnectionsPerAddress
	}
	return c
}

// Server is the gRPC API's server: a grpc.Server whose Serve also bounds
// the connections of each client address and watches that clients take
// their responses.
type Server struct {
	*grpc.Server
	maxPerAddress int // -1: no bound
	conns         *connRegistry
}

// Serve serves the connections of ln, refusing those of an address that
// holds MaxConnectionsPerAddress already; see grpc.Server.Serve.
func (s *Server) Serve(ln net.Listener) error {
	return s.Server.Serve(newListener(ln, s.maxPerAddress, s.conns))
}

// New returns a gRPC server that serves h's API; call Serve with a
// listener, and GracefulStop or Stop to end it.
func New(h *hub.Hub, cfg Config) (*Server, error) {
	if cfg.Key == "" && !cfg.Insecure {
		return nil, errors.New("grpcapi: Key is required (or set Insecure for development)")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("grpcapi: %w", err)
	}
	cfg = cfg.withDefaults()
	svc, err := api.NewGRPCService(h, cfg.API)
	if err != nil {
		return nil, err
	}
	// The key is checked when a call's headers arrive (streamGate), before
	// any of its message is read; the interceptors check it again so that
	// no call reaches a method without it, whatever the transport did.
	// The error mode applies to what the method answered.
	var chain []grpc.UnaryServerInterceptor
	if !cfg.Insecure {
		chain = append(chain, keyAuth(cfg.Key))
	}
	if tr := svc.TraceInterceptor(); tr != nil {
		chain = append(chain, tr)
	}
	chain = append(chain, transportErrors(cfg.ErrorMode == ErrorModeTransport))
	conns := newConnRegistry()
	gate := newStreamGate(cfg, conns)
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(cfg.MaxReceiveMessageSize),
		grpc.ChainUnaryInterceptor(chain...),
		grpc.InTapHandle(gate.tap),
		grpc.StatsHandler(gate),
		grpc.MaxConcurrentStreams(uint32(cfg.MaxConcurrentStreams)),
		grpc.MaxHeaderListSize(maxHeaderListSize),
		grpc.ConnectionTimeout(cfg.ReadTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: cfg.IdleTimeout, Time: keepaliveTime, Timeout: keepaliveTimeout,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: keepaliveMinTime, PermitWithoutStream: true}),
	}
	if !cfg.Insecure {
		opts = append(opts, grpc.StreamInterceptor(keyAuthStream(cfg.Key)))
	}
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLS)))
	}
	s := grpc.NewServer(opts...)
	svc.Register(s)
	if cfg.Reflection {
		reflection.Register(s)
	}
	return &Server{Server: s, maxPerAddress: cfg.MaxConnectionsPerAddress, conns: conns}, nil
}
