package server

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/heraldhq/herald/transport/unigrpc"
)

// uniGRPC is the uni_grpc listener (transport/unigrpc) and its TLS.
type uniGRPC struct {
	srv *grpc.Server
	ln  net.Listener
	tls *listenerTLS // nil: plaintext
}

// newUniGRPC prepares uni_grpc when it is enabled; nil otherwise.
func (s *Server) newUniGRPC() (*uniGRPC, error) {
	c := s.cfg.UniGRPC
	if !c.Enabled {
		return nil, nil
	}
	t, err := newFilesTLS("uni_grpc.tls", c.TLS, s.log)
	if err != nil {
		return nil, err
	}
	var opts []grpc.ServerOption
	if t != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(t.conf)))
	}
	if c.MaxReceiveMessageSize > 0 {
		opts = append(opts, grpc.MaxRecvMsgSize(c.MaxReceiveMessageSize))
	}
	srv := grpc.NewServer(opts...)
	unigrpc.New(s.hub, unigrpc.Config{
		WriteTimeout: s.cfg.WebSocket.WriteTimeout,
		KeepHeader:   proxyHeaderKeeper(s.cfg),
		Logger:       s.log,
	}).Register(srv)
	return &uniGRPC{srv: srv, tls: t}, nil
}

// startUniGRPC listens for uni_grpc, when it is enabled.
func (s *Server) startUniGRPC() error {
	if s.uniGRPC == nil {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.UniGRPC.ListenAddress())
	if err != nil {
		return fmt.Errorf("uni_grpc: listen on %s: %w", s.cfg.UniGRPC.ListenAddress(), err)
	}
	s.uniGRPC.ln = ln
	go func() { _ = s.uniGRPC.srv.Serve(ln) }()
	s.log.Info("uni_grpc listening", "address", ln.Addr().String(), "tls", s.uniGRPC.tls != nil)
	return nil
}

// UniGRPCAddr is the uni_grpc listener's address, once started; "" when
// off.
func (s *Server) UniGRPCAddr() string {
	if s.uniGRPC == nil || s.uniGRPC.ln == nil {
		return ""
	}
	return s.uniGRPC.ln.Addr().String()
}

// stopUniGRPC stops the uni_grpc listener after the drain: the streams
// end as their clients are closed (each with its disconnect push), and
// those left when ctx ends are cut.
func (s *Server) stopUniGRPC(ctx context.Context) {
	if s.uniGRPC == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		s.uniGRPC.srv.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.uniGRPC.srv.Stop()
		<-done
	}
}
