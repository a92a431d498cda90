package unigrpc

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/unigrpc/unistream"
)

// DefaultWriteTimeout bounds the delivery of one frame to a client when
// Config.WriteTimeout is 0.
const DefaultWriteTimeout = 10 * time.Second

// Config is what New takes.
type Config struct {
	// WriteTimeout bounds the delivery of one frame (a Send that gRPC's
	// flow control holds back while the client does not read): past it
	// the connection is closed. DefaultWriteTimeout when 0.
	WriteTimeout time.Duration
	// KeepHeader returns what a connection keeps of its request's
	// metadata, given as an HTTP header with canonical names: the names
	// some proxy forwards (grpc_metadata), say. Nil keeps nothing.
	KeepHeader func(http.Header) map[string][]string
	Logger     *slog.Logger
}

// Server serves Consume; it implements unistream.CentrifugoUniStreamServer.
type Server struct {
	unistream.UnimplementedCentrifugoUniStreamServer
	hub *hub.Hub
	cfg Config
}

// New makes a server of h's connections.
func New(h *hub.Hub, cfg Config) *Server {
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Server{hub: h, cfg: cfg}
}

// Register adds the CentrifugoUniStream service to g.
func (s *Server) Register(g *grpc.Server) { unistream.RegisterCentrifugoUniStreamServer(g, s) }

// Consume opens a unidirectional connection for the request and streams
// its pushes until the connection closes (the server's disconnect push is
// the last message) or the client goes away. All sends happen on this
// goroutine: gRPC does not allow a send once the handler has returned.
func (s *Server) Consume(req *unistream.ConnectRequest, st grpc.ServerStreamingServer[unistream.Push]) error {
	ctx := st.Context()
	remote := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		remote = p.Addr.String()
	}
	t := newStream(s.cfg, remote)
	c := s.hub.Open(t, hub.ConnInfo{
		RemoteAddr:     remote,
		Transport:      hub.TransportUniGRPC,
		Unidirectional: true,
		Header:         s.header(ctx),
	})
	c.Connect(connectRequest(req))
	t.run(ctx, st)
	c.HandleClose()
	return nil
}

// header is what the connection keeps of the request's metadata.
func (s *Server) header(ctx context.Context) map[string][]string {
	if s.cfg.KeepHeader == nil {
		return nil
	}
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return nil
	}
	h := make(http.Header, len(md))
	for k, vs := range md {
		// Pseudo-headers and gRPC's own keys are not the client's.
		if strings.HasPrefix(k, ":") || strings.HasPrefix(k, "grpc-") {
			continue
		}
		h[http.CanonicalHeaderKey(k)] = vs
	}
	return s.cfg.KeepHeader(h)
}

// connectRequest converts Consume's request to the client protocol's: the
// field numbers are the same, the types are not.
func connectRequest(r *unistream.ConnectRequest) *protocol.ConnectRequest {
	out := &protocol.ConnectRequest{Token: r.Token, Data: r.Data, Name: r.Name, Version: r.Version, Headers: r.Headers}
	if len(r.Subs) > 0 {
		out.Subs = make(map[string]*protocol.SubscribeRequest, len(r.Subs))
		for ch, sr := range r.Subs {
			out.Subs[ch] = &protocol.SubscribeRequest{Recover: sr.GetRecover(), Epoch: sr.GetEpoch(), Offset: sr.GetOffset()}
		}
	}
	return out
}
