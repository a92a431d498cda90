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

// Config configures the gRPC API server.
type Config struct {
	// Key is the API key callers send as "authorization: apikey <KEY>";
	// required unless Insecure.
	Key string
	// Insecure accepts calls without a key. For development only.
	Insecure bool
	// ErrorMode is "" (errors inside responses, with status OK) or
	// "transport" (errors as gRPC statuses: 100 Internal, 102 and 104
	// NotFound, 107 and 108 InvalidArgument, 112 OutOfRange, 113
	// AlreadyExists, any other Internal). A call can ask for the transport
	// mode with the metadata "x-centrifugo-error-mode: transport". Batch
	// replies keep their errors either way.
	ErrorMode string
	// Reflection serves the gRPC reflection service, so that tools such as
	// grpcurl can list and call the methods without api.proto. It is
	// behind the key like every method.
	Reflection bool
	// MaxReceiveMessageSize bounds one request message in bytes; a larger
	// one is refused with ResourceExhausted before it is decoded. Zero
	// means DefaultMaxReceiveMessageSize.
	MaxReceiveMessageSize int
	// TLS, when set, makes the server speak TLS only. Its NextProtos is
	// set to h2 by grpc-go.
	TLS *tls.Config
	// API configures the methods: MaxBatchCommands, Logger and
	// TracerProvider are used (see api.Config).
	API api.Config
}

// New returns a gRPC server that serves h's API; call Serve with a
// listener, and GracefulStop or Stop to end it.
func New(h *hub.Hub, cfg Config) (*grpc.Server, error) {
	if cfg.Key == "" && !cfg.Insecure {
		return nil, errors.New("grpcapi: Key is required (or set Insecure for development)")
	}
	if cfg.MaxReceiveMessageSize < 0 {
		return nil, fmt.Errorf("grpcapi: MaxReceiveMessageSize %d: must not be negative (0 means the default, %d)", cfg.MaxReceiveMessageSize, DefaultMaxReceiveMessageSize)
	}
	switch cfg.ErrorMode {
	case "", ErrorModeTransport:
	default:
		return nil, fmt.Errorf("grpcapi: ErrorMode %q: want \"\" or %q", cfg.ErrorMode, ErrorModeTransport)
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
