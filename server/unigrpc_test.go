package server

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/proxy/proxyproto"
	"github.com/heraldhq/herald/transport/unigrpc/unistream"
)

// freeTCPPort is a loopback port nobody listened on a moment ago.
func freeTCPPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// uniGRPCClient dials a node's uni_grpc listener with a client generated
// from unistream.proto.
func uniGRPCClient(t *testing.T, s *Server) unistream.CentrifugoUniStreamClient {
	t.Helper()
	if s.UniGRPCAddr() == "" {
		t.Fatal("uni_grpc is not listening")
	}
	conn, err := grpc.NewClient(s.UniGRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return unistream.NewCentrifugoUniStreamClient(conn)
}

// recvPush returns the next push, failing after 5 s.
func recvPush(t *testing.T, st grpc.ServerStreamingClient[unistream.Push]) (*unistream.Push, error) {
	t.Helper()
	type res struct {
		p   *unistream.Push
		err error
	}
	ch := make(chan res, 1)
	go func() {
		p, err := st.Recv()
		ch <- res{p, err}
	}()
	select {
	case r := <-ch:
		return r.p, r.err
	case <-time.After(5 * time.Second):
		t.Fatal("no push within 5 s")
		return nil, nil
	}
}

// TestUniGRPC: a uni_grpc client with a token gets the connect push, then
// what the HTTP API publishes to its channel; on shutdown the drain's
// disconnect push ends its stream.
func TestUniGRPC(t *testing.T) {
	cfg := config.Default()
	cfg.UniGRPC.Enabled = true
	cfg.UniGRPC.Address = "127.0.0.1"
	cfg.UniGRPC.Port = freeTCPPort(t)
	cfg.HTTPAPI.Key = "k"
	cfg.Shutdown.DrainWindow = 10 * time.Millisecond
	s := startServer(t, cfg)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = s.Shutdown(context.Background())
		}
	})
	if s.UniGRPCAddr() != "127.0.0.1:"+strconv.Itoa(cfg.UniGRPC.Port) {
		t.Fatalf("uni_grpc listens on %q", s.UniGRPCAddr())
	}
	st, err := uniGRPCClient(t, s).Consume(context.Background(), &unistream.ConnectRequest{
		Token: uniToken(t, auth.ConnectClaims{User: "u1", Channels: []string{"news"}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := recvPush(t, st); err != nil || p.Connect == nil {
		t.Fatalf("want the connect push, got %v, %v", p, err)
	}
	if r := apiCall(t, s, "publish", `{"channel":"news","data":{"text":"hi"}}`); !strings.HasPrefix(r, `{"result":`) {
		t.Fatalf("publish: %s", r)
	}
	p, err := recvPush(t, st)
	if err != nil || p.Channel != "news" || p.Pub == nil || string(p.Pub.Data) != `{"text":"hi"}` {
		t.Fatalf("publication push: %v, %v", p, err)
	}
	stopped = true
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err = recvPush(t, st)
	if err != nil || p.Disconnect == nil || p.Disconnect.Code != 3001 {
		t.Fatalf("want the drain's disconnect push (3001), got %v, %v", p, err)
	}
	if _, err := recvPush(t, st); err != io.EOF {
		t.Fatalf("the stream goes on after the disconnect push: %v", err)
	}
}

// connectBackend is a gRPC connect proxy that authenticates the user named
// by the x-tenant metadata of the connection.
type connectBackend struct {
	proxyproto.UnimplementedCentrifugoProxyServer
	seen chan metadata.MD
}

func (b *connectBackend) Connect(ctx context.Context, r *proxyproto.ConnectRequest) (*proxyproto.ConnectResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	b.seen <- md
	if r.Transport != "uni_grpc" || len(md.Get("x-tenant")) != 1 {
		return &proxyproto.ConnectResponse{Disconnect: &proxyproto.Disconnect{Code: 4501, Reason: "who are you"}}, nil
	}
	return &proxyproto.ConnectResponse{Result: &proxyproto.ConnectResult{User: "tenant-" + md.Get("x-tenant")[0], Data: []byte(`{"ok":true}`)}}, nil
}

// TestUniGRPCThroughGRPCProxy: a uni_grpc client without a token is
// authenticated by a gRPC connect proxy, which receives the call's
// metadata keys named in grpc_metadata.
func TestUniGRPCThroughGRPCProxy(t *testing.T) {
	b := &connectBackend{seen: make(chan metadata.MD, 4)}
	gs := grpc.NewServer()
	proxyproto.RegisterCentrifugoProxyServer(gs, b)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)

	cfg := config.Default()
	cfg.UniGRPC.Enabled = true
	cfg.UniGRPC.Address = "127.0.0.1"
	cfg.UniGRPC.Port = freeTCPPort(t)
	cfg.Proxies = []config.ProxyEndpointConfig{{Name: "auth", URL: "grpc://" + lis.Addr().String(), Timeout: time.Second, GRPCMetadata: []string{"x-tenant"}}}
	cfg.Client.Proxy.Connect = "auth"
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-tenant", "acme", "x-other", "no")
	st, err := uniGRPCClient(t, s).Consume(ctx, &unistream.ConnectRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := recvPush(t, st)
	if err != nil || p.Connect == nil || string(p.Connect.Data) != `{"ok":true}` {
		t.Fatalf("want the connect push with the backend's data, got %v, %v", p, err)
	}
	md := <-b.seen
	if len(md.Get("x-other")) != 0 {
		t.Fatalf("metadata not in grpc_metadata was forwarded: %v", md)
	}
}
