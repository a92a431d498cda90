package server

import (
	"context"
	"fmt"
	"net"

	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/api/grpcapi"
)

// grpcAPI is the gRPC server API's listener (grpc_api), off when nil.
type grpcAPI struct {
	server *grpcapi.Server
	tls    *listenerTLS // nil: plaintext
	ln     net.Listener
}

// newGRPCAPI builds the gRPC API when grpc_api.enabled is set; it listens
// from Start.
func (s *Server) newGRPCAPI(tp trace.TracerProvider) error {
	if !s.cfg.GRPCAPIConfig.Enabled {
		return nil
	}
	t, err := newFilesTLS("grpc_api.tls", s.cfg.GRPCAPIConfig.TLS, s.log)
	if err != nil {
		return err
	}
	gcfg := s.cfg.GRPCAPI()
	gcfg.API.Logger, gcfg.API.TracerProvider = s.log, tp
	if t != nil {
		gcfg.TLS = t.conf
	}
	srv, err := grpcapi.New(s.hub, gcfg)
	if err != nil {
		return fmt.Errorf("grpc_api: %w", err)
	}
	s.grpc = &grpcAPI{server: srv, tls: t}
	return nil
}

// startGRPCAPI listens on grpc_api.address:grpc_api.port.
func (s *Server) startGRPCAPI() error {
	if s.grpc == nil {
		return nil
	}
	addr := s.cfg.GRPCAPIConfig.ListenAddress()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("grpc_api: listen on %s: %w", addr, err)
	}
	s.grpc.ln = ln
	go func() {
		if err := s.grpc.server.Serve(ln); err != nil {
			s.log.Error("grpc_api: serve", "error", err)
		}
	}()
	s.log.Info("gRPC API listening", "address", ln.Addr().String(), "tls", s.grpc.tls != nil)
	return nil
}

// GRPCAPIAddr is the gRPC API's address, once started; "" when off.
func (s *Server) GRPCAPIAddr() string {
	if s.grpc == nil || s.grpc.ln == nil {
		return ""
	}
	return s.grpc.ln.Addr().String()
}

// stopGRPCAPI lets in-flight calls finish until ctx ends, then cuts the
// rest.
func (s *Server) stopGRPCAPI(ctx context.Context) error {
	if s.grpc == nil {
		return nil
	}
	done := make(chan struct{})
	go func() {
		s.grpc.server.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.grpc.server.Stop()
		<-done
		return fmt.Errorf("grpc_api: calls still running at the shutdown timeout were cut: %w", ctx.Err())
	}
}
