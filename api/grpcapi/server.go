package grpcapi

import (
	"crypto/tls"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/reflection"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/hub"
)

// DefaultMaxReceiveMessageSize bounds a request message when
// Config.MaxReceiveMessageSize is 0: grpc-go's own default, 4 MiB, which
// Centrifugo keeps too.
const DefaultMaxReceiveMessageSize = 4 << 20

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
	MaxReceiveMessageSize int `yaml:"max_receive_message_size" default:"4194304" doc:"largest request message in bytes; a larger one is refused with the gRPC status RESOURCE_EXHAUSTED. '0' means the default (4 MiB)"`
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
	var errs []error
	if c.MaxReceiveMessageSize < 0 {
		errs = append(errs, &hub.OptionError{Field: "MaxReceiveMessageSize", Message: fmt.Sprintf("%d: must not be negative (0 means the default, %d)", c.MaxReceiveMessageSize, DefaultMaxReceiveMessageSize)})
	}
	switch c.ErrorMode {
	case "", ErrorModeTransport:
	default:
		errs = append(errs, &hub.OptionError{Field: "ErrorMode", Message: fmt.Sprintf("%q: want \"\" or %q", c.ErrorMode, ErrorModeTransport)})
	}
	return errors.Join(errs...)
}

// New returns a gRPC server that serves h's API; call Serve with a
// listener, and GracefulStop or Stop to end it.
func New(h *hub.Hub, cfg Config) (*grpc.Server, error) {
	if cfg.Key == "" && !cfg.Insecure {
		return nil, errors.New("grpcapi: Key is required (or set Insecure for development)")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("grpcapi: %w", err)
	}
	svc, err := api.NewGRPCService(h, cfg.API)
	if err != nil {
		return nil, err
	}
	size := cfg.MaxReceiveMessageSize
	if size == 0 {
		size = DefaultMaxReceiveMessageSize
	}
	// The key is checked first; the error mode applies to what the
	// method answered.
	var chain []grpc.UnaryServerInterceptor
	if !cfg.Insecure {
		chain = append(chain, keyAuth(cfg.Key))
	}
	if tr := svc.TraceInterceptor(); tr != nil {
		chain = append(chain, tr)
	}
	chain = append(chain, transportErrors(cfg.ErrorMode == ErrorModeTransport))
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(size), grpc.ChainUnaryInterceptor(chain...)}
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
	return s, nil
}
