package proxy_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/tlsfiles"
	"github.com/heraldhq/herald/proxy"
	"github.com/heraldhq/herald/proxy/proxyproto"
)

// grpcCall is one request a gRPC backend received.
type grpcCall struct {
	method string
	md     metadata.MD
	req    proto.Message
}

// grpcBackend is the application side over gRPC: a real gRPC server
// implementing proxy.proto's CentrifugoProxy, whose answer to each method
// the test sets, recording every request.
type grpcBackend struct {
	proxyproto.UnimplementedCentrifugoProxyServer
	t     *testing.T
	srv   *grpc.Server
	lis   net.Listener
	calls chan grpcCall
	mu    sync.Mutex
	// answers maps a method to its handler; absent methods answer
	// Unimplemented, as a backend that implements only some does.
	answers map[string]func(context.Context, proto.Message) (proto.Message, error)
}

func newGRPCBackend(t *testing.T, opts ...grpc.ServerOption) *grpcBackend {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &grpcBackend{t: t, lis: lis, calls: make(chan grpcCall, 256), answers: map[string]func(context.Context, proto.Message) (proto.Message, error){}}
	b.srv = grpc.NewServer(opts...)
	proxyproto.RegisterCentrifugoProxyServer(b.srv, b)
	go func() { _ = b.srv.Serve(lis) }()
	t.Cleanup(b.srv.Stop)
	return b
}

func (b *grpcBackend) url() string { return "grpc://" + b.lis.Addr().String() }

// answer makes method answer resp.
func (b *grpcBackend) answer(method string, resp proto.Message) {
	b.handle(method, func(context.Context, proto.Message) (proto.Message, error) { return resp, nil })
}

func (b *grpcBackend) handle(method string, fn func(context.Context, proto.Message) (proto.Message, error)) {
	b.mu.Lock()
	b.answers[method] = fn
	b.mu.Unlock()
}

func (b *grpcBackend) serve(ctx context.Context, method string, req proto.Message) (proto.Message, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	b.calls <- grpcCall{method: method, md: md, req: req}
	b.mu.Lock()
	fn := b.answers[method]
	b.mu.Unlock()
	if fn == nil {
		return nil, status.Errorf(codes.Unimplemented, "method %s not implemented", method)
	}
	return fn(ctx, req)
}

func (b *grpcBackend) Connect(ctx context.Context, r *proxyproto.ConnectRequest) (*proxyproto.ConnectResponse, error) {
	out, err := b.serve(ctx, "Connect", r)
	if err != nil {
		return nil, err
	}
	return out.(*proxyproto.ConnectResponse), nil
}

func (b *grpcBackend) Refresh(ctx context.Context, r *proxyproto.RefreshRequest) (*proxyproto.RefreshResponse, error) {
	out, err := b.serve(ctx, "Refresh", r)
	if err != nil {
		return nil, err
	}
	return out.(*proxyproto.RefreshResponse), nil
}

func (b *grpcBackend) Subscribe(ctx context.Context, r *proxyproto.SubscribeRequest) (*proxyproto.SubscribeResponse, error) {
	out, err := b.serve(ctx, "Subscribe", r)
	if err != nil {
		return nil, err
	}
	return out.(*proxyproto.SubscribeResponse), nil
}

func (b *grpcBackend) Publish(ctx context.Context, r *proxyproto.PublishRequest) (*proxyproto.PublishResponse, error) {
	out, err := b.serve(ctx, "Publish", r)
	if err != nil {
		return nil, err
	}
	return out.(*proxyproto.PublishResponse), nil
}

func (b *grpcBackend) SubRefresh(ctx context.Context, r *proxyproto.SubRefreshRequest) (*proxyproto.SubRefreshResponse, error) {
	out, err := b.serve(ctx, "SubRefresh", r)
	if err != nil {
		return nil, err
	}
	return out.(*proxyproto.SubRefreshResponse), nil
}

func (b *grpcBackend) RPC(ctx context.Context, r *proxyproto.RPCRequest) (*proxyproto.RPCResponse, error) {
	out, err := b.serve(ctx, "RPC", r)
	if err != nil {
		return nil, err
	}
	return out.(*proxyproto.RPCResponse), nil
}

// next returns the next request the backend received.
func (b *grpcBackend) next() grpcCall {
	b.t.Helper()
	select {
	case c := <-b.calls:
		return c
	case <-time.After(5 * time.Second):
		b.t.Fatal("the gRPC backend received no request")
		return grpcCall{}
	}
}

// grpcConfig proxies every event to b, as fullConfig does over HTTP.
func grpcConfig(b *grpcBackend, mod func(*proxy.Endpoint)) proxy.Config {
	var eps []proxy.Endpoint
	for _, ev := range []string{"connect", "refresh", "subscribe", "publish", "sub_refresh", "rpc", "rpc_ns"} {
		e := proxy.Endpoint{Name: ev, URL: b.url(), Timeout: 2 * time.Second}
		if mod != nil {
			mod(&e)
		}
		eps = append(eps, e)
	}
	return proxy.Config{
		Endpoints: eps,
		Connect:   "connect", Refresh: "refresh",
		Subscribe:     map[string]string{"": "subscribe", "px": "subscribe"},
		Publish:       map[string]string{"": "publish", "px": "publish"},
		SubRefresh:    map[string]string{"": "sub_refresh", "px": "sub_refresh"},
		RPC:           "rpc",
		RPCNamespaces: map[string]string{"ns": "rpc_ns", "off": ""},
	}
}

// grpcConnected is a client the gRPC connect proxy authenticated as user.
func grpcConnected(t *testing.T, n *node, b *grpcBackend, user string) *client {
	t.Helper()
	b.answer("Connect", &proxyproto.ConnectResponse{Result: &proxyproto.ConnectResult{User: user}})
	c := n.dial(nil)
	if m := c.Call(`{"id":1,"connect":{}}`); m["connect"] == nil {
		t.Fatalf("connect: %v", m)
	}
	b.next()
	return c
}

// TestGRPCEvents: every event through a gRPC backend, with the requests
// it receives and the answers the client gets, as over HTTP.
func TestGRPCEvents(t *testing.T) {
	t.Parallel()
	b := newGRPCBackend(t)
	n := startNode(t, grpcConfig(b, func(e *proxy.Endpoint) {
		e.HTTPHeaders = []string{"X-User", "Cookie"}
		e.GRPC.CredentialsKey, e.GRPC.CredentialsValue = "x-backend-secret", "s3cret"
		// Static metadata goes along, overridden by a forwarded header.
		e.GRPC.StaticMetadata = map[string]string{"X-Region": "eu", "x-user": "static"}
		e.IncludeConnectionMeta = true
	}))

	// Connect: a client without token, authenticated by the backend, with
	// the forwarded headers as lowercase metadata.
	b.answer("Connect", &proxyproto.ConnectResponse{Result: &proxyproto.ConnectResult{
		User: "u1", Info: []byte(`{"name":"Ann"}`), Data: []byte(`{"hello":1}`), Meta: []byte(`{"tier":"gold"}`),
	}})
	c := n.dial(map[string][]string{"X-User": {"ann"}, "Cookie": {"sid=1"}, "X-Other": {"no"}})
	m := c.Call(`{"id":1,"connect":{"name":"js","version":"5.8","data":{"hi":true}}}`)
	got := b.next()
	req := got.req.(*proxyproto.ConnectRequest)
	if got.method != "Connect" || req.Transport != "websocket" || req.Protocol != "json" || req.Encoding != "json" ||
		req.Name != "js" || req.Version != "5.8" || string(req.Data) != `{"hi":true}` || req.Client == "" {
		t.Fatalf("connect request: %v", req)
	}
	if v := got.md.Get("x-user"); len(v) != 1 || v[0] != "ann" {
		t.Fatalf("x-user metadata: %v", got.md)
	}
	if v := got.md.Get("cookie"); len(v) != 1 || v[0] != "sid=1" {
		t.Fatalf("cookie metadata: %v", got.md)
	}
	if v := got.md.Get("x-backend-secret"); len(v) != 1 || v[0] != "s3cret" {
		t.Fatalf("credentials metadata: %v", got.md)
	}
	if v := got.md.Get("x-region"); len(v) != 1 || v[0] != "eu" {
		t.Fatalf("static metadata: %v", got.md)
	}
	if len(got.md.Get("x-other")) != 0 {
		t.Fatalf("a header not configured was forwarded: %v", got.md)
	}
	if jsonclient.Compact(t, jsonclient.Path(m, "connect", "data")) != `{"hello":1}` || c.c.User() != "u1" {
		t.Fatalf("connect reply: %v", m)
	}

	// Subscribe: allowed with info; the connection's meta goes along.
	b.answer("Subscribe", &proxyproto.SubscribeResponse{Result: &proxyproto.SubscribeResult{Info: []byte(`{"role":"mod"}`)}})
	c.MustSubscribe(2, "px:room", "")
	got = b.next()
	sreq := got.req.(*proxyproto.SubscribeRequest)
	if sreq.Channel != "px:room" || sreq.User != "u1" || string(sreq.Meta) != `{"tier":"gold"}` {
		t.Fatalf("subscribe request: %v", sreq)
	}
	// Denied.
	b.answer("Subscribe", &proxyproto.SubscribeResponse{Error: &proxyproto.Error{Code: 1403, Message: "not in this room"}})
	m = c.Call(`{"id":3,"subscribe":{"channel":"px:other"}}`)
	b.next()
	jsonclient.WantError(t, m, 1403)
	if jsonclient.Path(m, "error", "message") != "not in this room" {
		t.Fatalf("subscribe error: %v", m)
	}

	// Publish: the backend rewrites the data; the subscriber receives the
	// rewritten publication.
	b.answer("Publish", &proxyproto.PublishResponse{Result: &proxyproto.PublishResult{Data: []byte(`{"text":"HI"}`)}})
	m = c.Call(`{"id":4,"publish":{"channel":"px:room","data":{"text":"hi"}}}`)
	if m["publish"] == nil {
		t.Fatalf("publish: %v", m)
	}
	preq := b.next().req.(*proxyproto.PublishRequest)
	if preq.Channel != "px:room" || string(preq.Data) != `{"text":"hi"}` {
		t.Fatalf("publish request: %v", preq)
	}
	push := c.Next()
	if jsonclient.Compact(t, jsonclient.Path(push, "push", "pub", "data")) != `{"text":"HI"}` {
		t.Fatalf("rewritten publication: %v", push)
	}
	// Denied.
	b.answer("Publish", &proxyproto.PublishResponse{Error: &proxyproto.Error{Code: 1001, Message: "spam"}})
	jsonclient.WantError(t, c.Call(`{"id":5,"publish":{"channel":"px:room","data":{"text":"buy"}}}`), 1001)
	b.next()
	// A result that is not JSON cannot reach a JSON client: error 100.
	b.answer("Publish", &proxyproto.PublishResponse{Result: &proxyproto.PublishResult{Data: []byte{0xff, 0x00}}})
	jsonclient.WantError(t, c.Call(`{"id":6,"publish":{"channel":"px:room","data":{"text":"x"}}}`), 100)
	b.next()

	// RPC: an answer, an error, a disconnect.
	b.answer("RPC", &proxyproto.RPCResponse{Result: &proxyproto.RPCResult{Data: []byte(`{"sum":3}`)}})
	m = c.Call(`{"id":7,"rpc":{"method":"add","data":{"a":1,"b":2}}}`)
	rreq := b.next().req.(*proxyproto.RPCRequest)
	if rreq.Method != "add" || string(rreq.Data) != `{"a":1,"b":2}` || jsonclient.Compact(t, jsonclient.Path(m, "rpc", "data")) != `{"sum":3}` {
		t.Fatalf("rpc: %v, request %v", m, rreq)
	}
	b.answer("RPC", &proxyproto.RPCResponse{Error: &proxyproto.Error{Code: 1500, Message: "nope", Temporary: true}})
	m = c.Call(`{"id":8,"rpc":{"method":"ns:x"}}`)
	b.next()
	if jsonclient.Compact(t, m["error"]) != `{"code":1500,"message":"nope","temporary":true}` {
		t.Fatalf("rpc error: %v", m)
	}
	b.answer("RPC", &proxyproto.RPCResponse{Disconnect: &proxyproto.Disconnect{Code: 4500, Reason: "go away"}})
	c.Send(`{"id":9,"rpc":{"method":"bye"}}`)
	b.next()
	c.ExpectClose(4500, "go away")
}

// TestGRPCFaults: a gRPC backend that hangs, answers a code outside the
// protocol's ranges, does not implement a method or is down gets the
// client error 100 (temporary), counted as failed, as over HTTP; a
// hanging call holds up only its own client.
func TestGRPCFaults(t *testing.T) {
	t.Parallel()
	b := newGRPCBackend(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downURL := "grpc://" + down.Addr().String()
	down.Close()

	cfg := grpcConfig(b, func(e *proxy.Endpoint) { e.Timeout = 300 * time.Millisecond })
	cfg.Endpoints = append(cfg.Endpoints, proxy.Endpoint{Name: "down", URL: downURL})
	cfg.RPCNamespaces["down"] = "down"
	n := startNode(t, cfg)

	hang := func(ctx context.Context, _ proto.Message) (proto.Message, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, status.Error(codes.Canceled, "gave up")
	}
	cases := []struct {
		name   string
		handle func(context.Context, proto.Message) (proto.Message, error)
	}{
		{"hanging", hang},
		{"status error", func(context.Context, proto.Message) (proto.Message, error) {
			return nil, status.Error(codes.Internal, "boom")
		}},
		{"unknown error code", func(context.Context, proto.Message) (proto.Message, error) {
			return &proxyproto.ConnectResponse{Error: &proxyproto.Error{Code: 5000}}, nil
		}},
		{"bad disconnect code", func(context.Context, proto.Message) (proto.Message, error) {
			return &proxyproto.ConnectResponse{Disconnect: &proxyproto.Disconnect{Code: 200}}, nil
		}},
		{"empty answer", func(context.Context, proto.Message) (proto.Message, error) {
			return &proxyproto.ConnectResponse{}, nil
		}},
		{"meta not JSON", func(context.Context, proto.Message) (proto.Message, error) {
			return &proxyproto.ConnectResponse{Result: &proxyproto.ConnectResult{User: "u", Meta: []byte("{")}}, nil
		}},
		{"unimplemented", nil},
	}
	for i, tc := range cases {
		b.mu.Lock()
		delete(b.answers, "Connect")
		b.mu.Unlock()
		if tc.handle != nil {
			b.handle("Connect", tc.handle)
		}
		c := n.dial(nil)
		start := time.Now()
		m := c.Call(`{"id":1,"connect":{}}`)
		b.next()
		if jsonclient.Compact(t, m["error"]) != `{"code":100,"message":"internal server error","temporary":true}` {
			t.Fatalf("%s: want error 100, got %v", tc.name, m)
		}
		if tc.name == "hanging" && time.Since(start) > 2*time.Second {
			t.Fatalf("hanging: the timeout (300ms) did not end the call: %s", time.Since(start))
		}
		if c.c.User() != "" || n.hub.NumClients() != 0 {
			t.Fatalf("%s: the client is connected after a failed proxy call", tc.name)
		}
		if got := counter(t, n.router, "connect", "connect", "failed"); got != float64(i+1) {
			t.Fatalf("%s: failed calls counted %v, want %d", tc.name, got, i+1)
		}
	}

	// The backend recovers; a backend that is down fails the call at once.
	c := grpcConnected(t, n, b, "back")
	start := time.Now()
	jsonclient.WantError(t, c.Call(`{"id":2,"rpc":{"method":"down:m"}}`), 100)
	if time.Since(start) > 2*time.Second {
		t.Fatalf("a backend that is down took %s to fail", time.Since(start))
	}
	if got := counter(t, n.router, "down", "rpc", "failed"); got != 1 {
		t.Fatalf("down: failed calls counted %v", got)
	}

	// One client's call hangs; another is served meanwhile.
	b.handle("RPC", func(ctx context.Context, req proto.Message) (proto.Message, error) {
		if req.(*proxyproto.RPCRequest).Method == "hang" {
			return hang(ctx, req)
		}
		return &proxyproto.RPCResponse{Result: &proxyproto.RPCResult{Data: []byte(`"quick"`)}}, nil
	})
	c.Send(`{"id":3,"rpc":{"method":"hang"}}`)
	b.next()
	other := grpcConnected(t, n, b, "other")
	if m := other.Call(`{"id":2,"rpc":{"method":"fast"}}`); jsonclient.Compact(t, m["rpc"]) != `{"data":"quick"}` {
		t.Fatalf("other client's rpc: %v", m)
	}
	b.next()
	jsonclient.WantError(t, c.Reply(3), 100)
}

// TestGRPCInFlightLimit: gRPC calls count against the same node-wide
// limit as HTTP ones; over it a call is answered 111 and never sent.
func TestGRPCInFlightLimit(t *testing.T) {
	t.Parallel()
	b := newGRPCBackend(t)
	release := make(chan struct{})
	arrived := make(chan struct{}, 8)
	t.Cleanup(func() { close(release) })
	cfg := grpcConfig(b, nil)
	cfg.MaxInFlight = 1
	n := startNode(t, cfg)
	c := grpcConnected(t, n, b, "u")
	b.handle("RPC", func(ctx context.Context, _ proto.Message) (proto.Message, error) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &proxyproto.RPCResponse{}, nil
	})
	c.Send(`{"id":2,"rpc":{"method":"slow"}}`)
	b.next()
	<-arrived
	other := n.dial(nil)
	jsonclient.WantError(t, other.Call(`{"id":1,"connect":{}}`), 111)
	select {
	case got := <-b.calls:
		t.Fatalf("a call over the limit reached the backend: %v", got.method)
	default:
	}
	if got := counter(t, n.router, "connect", "connect", "rejected"); got != 1 {
		t.Fatalf("rejected calls counted %v", got)
	}
}

// TestGRPCTLS: a gRPC backend with a certificate from a private CA for
// another name, requiring a client certificate: with the endpoint's TLS
// configuration the call goes through; without it (plaintext) the client
// gets error 100.
func TestGRPCTLS(t *testing.T) {
	t.Parallel()
	ca := testcerts.NewCA(t, "herald-test")
	pair := ca.ServerFor("backend", "backend.internal")
	cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	b := newGRPCBackend(t, grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool,
	})))
	client := ca.Client("herald-node")
	good, err := tlsfiles.Files{CAFile: ca.File, CertFile: client.CertFile, KeyFile: client.KeyFile, ServerName: "backend.internal"}.Config()
	if err != nil {
		t.Fatal(err)
	}
	b.answer("Connect", &proxyproto.ConnectResponse{Result: &proxyproto.ConnectResult{User: "tls-user"}})

	n := startNode(t, grpcConfig(b, func(e *proxy.Endpoint) { e.TLS = good }))
	c := n.dial(nil)
	if m := c.Call(`{"id":1,"connect":{}}`); m["connect"] == nil {
		t.Fatalf("connect over TLS: %v", m)
	}
	b.next()

	plain := startNode(t, grpcConfig(b, nil))
	jsonclient.WantError(t, plain.dial(nil).Call(`{"id":1,"connect":{}}`), 100)
}

// TestGRPCEndpointCheck: what a grpc:// endpoint refuses, naming the Go
// field (package config names the key).
func TestGRPCEndpointCheck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		e     proxy.Endpoint
		field string
	}{
		{proxy.Endpoint{Name: "a", URL: "grpc://localhost"}, "URL"},
		{proxy.Endpoint{Name: "a", URL: "grpc://localhost:1/svc"}, "URL"},
		{proxy.Endpoint{Name: "a", URL: "grpc://localhost:1", StaticHTTPHeaders: map[string]string{"X-A": "b"}}, "StaticHTTPHeaders"},
		{proxy.Endpoint{Name: "a", URL: "http://localhost:1", GRPC: proxy.GRPCOptions{CredentialsKey: "k", CredentialsValue: "v"}}, "GRPC.CredentialsKey"},
		{proxy.Endpoint{Name: "a", URL: "http://localhost:1", GRPC: proxy.GRPCOptions{Compression: true}}, "GRPC.Compression"},
		{proxy.Endpoint{Name: "a", URL: "grpc://localhost:1", GRPC: proxy.GRPCOptions{CredentialsKey: "Bad Key"}}, "GRPC.CredentialsKey"},
		{proxy.Endpoint{Name: "a", URL: "grpc://localhost:1", GRPC: proxy.GRPCOptions{CredentialsValue: "v"}}, "GRPC.CredentialsKey"},
		{proxy.Endpoint{Name: "a", URL: "grpc://localhost:1", GRPC: proxy.GRPCOptions{StaticMetadata: map[string]string{"grpc-x": "v"}}}, "GRPC.StaticMetadata"},
		{proxy.Endpoint{Name: "a", URL: "grpc://localhost:1", GRPCMetadata: []string{"grpc-timeout"}}, "GRPCMetadata[0]"},
		{proxy.Endpoint{Name: "a", URL: "ftp://localhost:1"}, "URL"},
	}
	for _, tc := range cases {
		ps := optionerr.All(tc.e.Validate())
		if len(ps) != 1 || ps[0].Field != tc.field {
			t.Errorf("%+v: want one problem with %s, got %v", tc.e, tc.field, ps)
		}
	}
	ok := proxy.Endpoint{Name: "a", URL: "grpc://localhost:1", GRPCMetadata: []string{"x-tenant"}, GRPC: proxy.GRPCOptions{CredentialsKey: "authorization", CredentialsValue: "Bearer x", Compression: true}}
	if ps := ok.Validate(); ps != nil {
		t.Errorf("a valid grpc endpoint: %v", ps)
	}
}

// TestGRPCTraceContext: with tracing on, a gRPC call carries the call
// span's W3C trace context in its traceparent metadata, and the span is
// recorded under the proxy's name and event.
func TestGRPCTraceContext(t *testing.T) {
	t.Parallel()
	b := newGRPCBackend(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	cfg := grpcConfig(b, nil)
	cfg.TracerProvider = tp
	n := startNode(t, cfg)
	grpcConnected(t, n, b, "traced")
	var span sdktrace.ReadOnlySpan
	for _, s := range spans.Ended() {
		if s.Name() == "proxy.connect" {
			span = s
		}
	}
	if span == nil {
		t.Fatalf("no proxy.connect span among %d", len(spans.Ended()))
	}
	// grpcConnected consumed the call; make another to read its metadata.
	b.answer("RPC", &proxyproto.RPCResponse{Result: &proxyproto.RPCResult{}})
	c := grpcConnected(t, n, b, "traced2")
	c.Call(`{"id":2,"rpc":{"method":"m"}}`)
	got := b.next()
	tp2 := got.md.Get("traceparent")
	if len(tp2) != 1 {
		t.Fatalf("traceparent metadata: %v", got.md)
	}
	var rpcSpan sdktrace.ReadOnlySpan
	for _, s := range spans.Ended() {
		if s.Name() == "proxy.rpc" {
			rpcSpan = s
		}
	}
	if rpcSpan == nil {
		t.Fatal("no proxy.rpc span")
	}
	want := "00-" + rpcSpan.SpanContext().TraceID().String() + "-" + rpcSpan.SpanContext().SpanID().String() + "-01"
	if tp2[0] != want {
		t.Fatalf("traceparent %q, want the call span's %q", tp2[0], want)
	}
}

// streamBackend answers SubscribeUnidirectional with fn.
type streamBackend struct {
	*grpcBackend
	fn func(*proxyproto.SubscribeRequest, grpc.ServerStreamingServer[proxyproto.StreamSubscribeResponse]) error
}

func (b *streamBackend) SubscribeUnidirectional(r *proxyproto.SubscribeRequest, st grpc.ServerStreamingServer[proxyproto.StreamSubscribeResponse]) error {
	return b.fn(r, st)
}

// TestGRPCSubscribeStream: a namespace with a subscribe-stream proxy: the
// stream's first message decides the subscription, its publications go to
// that subscriber only, and the stream ends when the client unsubscribes;
// a stream the backend ends unsubscribes the client with 2500; a refusal
// in the first message is the client's error; no first message within
// the timeout is error 100.
func TestGRPCSubscribeStream(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := &grpcBackend{t: t, lis: lis, calls: make(chan grpcCall, 256), answers: map[string]func(context.Context, proto.Message) (proto.Message, error){}}
	requests := make(chan *proxyproto.SubscribeRequest, 16)
	ended := make(chan string, 16)
	publish := make(chan []byte, 16)
	sb := &streamBackend{grpcBackend: base, fn: func(r *proxyproto.SubscribeRequest, st grpc.ServerStreamingServer[proxyproto.StreamSubscribeResponse]) error {
		requests <- r
		defer func() { ended <- r.Channel }()
		switch r.Channel {
		case "plain:denied":
			return st.Send(&proxyproto.StreamSubscribeResponse{SubscribeResponse: &proxyproto.SubscribeResponse{Error: &proxyproto.Error{Code: 403, Message: "no"}}})
		case "plain:silent":
			<-st.Context().Done()
			return nil
		}
		if err := st.Send(&proxyproto.StreamSubscribeResponse{SubscribeResponse: &proxyproto.SubscribeResponse{Result: &proxyproto.SubscribeResult{Data: []byte(`{"stream":"` + r.Channel + `"}`)}}}); err != nil {
			return err
		}
		for {
			select {
			case data := <-publish:
				if data == nil {
					return nil // the backend ends the stream
				}
				if err := st.Send(&proxyproto.StreamSubscribeResponse{Publication: &proxyproto.Publication{Data: data, Tags: map[string]string{"k": "v"}}}); err != nil {
					return err
				}
			case <-st.Context().Done():
				return nil
			}
		}
	}}
	base.srv = grpc.NewServer()
	proxyproto.RegisterCentrifugoProxyServer(base.srv, sb)
	go func() { _ = base.srv.Serve(lis) }()
	t.Cleanup(base.srv.Stop)

	cfg := grpcConfig(base, func(e *proxy.Endpoint) { e.Timeout = 300 * time.Millisecond })
	cfg.Endpoints = append(cfg.Endpoints, proxy.Endpoint{Name: "streams", URL: base.url(), Timeout: 300 * time.Millisecond})
	cfg.SubscribeStream = map[string]string{"plain": "streams"}
	n := startNode(t, cfg)
	c := grpcConnected(t, n, base, "viewer")

	res := c.MustSubscribe(2, "plain:a", "")
	if jsonclient.Compact(t, res["data"]) != `{"stream":"plain:a"}` {
		t.Fatalf("subscribe result: %v", res)
	}
	if r := <-requests; r.Channel != "plain:a" || r.User != "viewer" || r.Transport != "websocket" {
		t.Fatalf("stream request: %v", r)
	}
	publish <- []byte(`{"n":1}`)
	m := c.Next()
	if jsonclient.Path(m, "push", "channel") != "plain:a" || jsonclient.Compact(t, jsonclient.Path(m, "push", "pub", "data")) != `{"n":1}` || jsonclient.Path(m, "push", "pub", "tags", "k") != "v" {
		t.Fatalf("stream publication: %v", m)
	}
	c.Call(`{"id":3,"unsubscribe":{"channel":"plain:a"}}`)
	select {
	case ch := <-ended:
		if ch != "plain:a" {
			t.Fatalf("stream %q ended", ch)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("unsubscribing did not end the backend's stream")
	}

	// The backend ends the stream: unsubscribe 2500.
	c.MustSubscribe(4, "plain:b", "")
	<-requests
	publish <- nil
	<-ended
	m = c.Next()
	if jsonclient.Path(m, "push", "channel") != "plain:b" || jsonclient.Num(jsonclient.Path(m, "push", "unsubscribe", "code")) != 2500 {
		t.Fatalf("want unsubscribe 2500, got %v", m)
	}

	// Refused in the first message; no first message in time.
	jsonclient.WantError(t, c.Subscribe(5, "plain:denied", ""), 403)
	<-requests
	<-ended
	jsonclient.WantError(t, c.Subscribe(6, "plain:silent", ""), 100)
	<-requests
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream that never answered was not cancelled")
	}
	if got := counter(t, n.router, "streams", "subscribe_stream", "failed"); got != 1 {
		t.Fatalf("failed stream openings counted %v", got)
	}
}

// TestSubscribeStreamConfig: a subscribe-stream proxy must be grpc://, and
// a namespace has a subscribe proxy or a subscribe-stream proxy, not both.
func TestSubscribeStreamConfig(t *testing.T) {
	t.Parallel()
	eps := []proxy.Endpoint{{Name: "http", URL: "http://localhost:1/x"}, {Name: "g", URL: "grpc://localhost:1"}}
	for _, tc := range []struct {
		cfg  proxy.Config
		want string
	}{
		{proxy.Config{Endpoints: eps, SubscribeStream: map[string]string{"live": "http"}}, `proxy "http" is not a grpc:// endpoint`},
		{proxy.Config{Endpoints: eps, SubscribeStream: map[string]string{"live": "g"}, Subscribe: map[string]string{"live": "g"}}, "both a subscribe proxy and a subscribe-stream proxy"},
		{proxy.Config{Endpoints: eps, SubscribeStream: map[string]string{"live": "nope"}}, `unknown proxy "nope"`},
		{proxy.Config{Endpoints: eps, SubscribeStreamBidirectional: map[string]bool{"live": true}}, "bidirectional without a subscribe-stream proxy"},
	} {
		r, err := proxy.New(tc.cfg)
		if err == nil {
			r.Close()
			t.Errorf("%+v: accepted", tc.cfg)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// bidiBackend answers SubscribeBidirectional: it allows the subscription
// and sends every publication the client makes back, upper-cased by
// wrapping it.
type bidiBackend struct {
	proxyproto.UnimplementedCentrifugoProxyServer
	first chan *proxyproto.SubscribeRequest
	ended chan struct{}
}

func (b *bidiBackend) SubscribeBidirectional(st grpc.BidiStreamingServer[proxyproto.StreamSubscribeRequest, proxyproto.StreamSubscribeResponse]) error {
	defer func() { b.ended <- struct{}{} }()
	m, err := st.Recv()
	if err != nil {
		return err
	}
	b.first <- m.GetSubscribeRequest()
	if err := st.Send(&proxyproto.StreamSubscribeResponse{SubscribeResponse: &proxyproto.SubscribeResponse{Result: &proxyproto.SubscribeResult{}}}); err != nil {
		return err
	}
	for {
		m, err := st.Recv()
		if err != nil {
			return nil // Herald cancelled the stream
		}
		if p := m.GetPublication(); p != nil {
			out := []byte(`{"echo":` + string(p.Data) + `}`)
			if err := st.Send(&proxyproto.StreamSubscribeResponse{Publication: &proxyproto.Publication{Data: out}}); err != nil {
				return err
			}
		}
	}
}

// TestGRPCBidirectionalStream: in a namespace with a bidirectional
// subscribe stream, the subscribe request is the stream's first message,
// the client's publications go to the stream, and what the backend sends
// back reaches the client; unsubscribing ends the stream.
func TestGRPCBidirectionalStream(t *testing.T) {
	t.Parallel()
	b := &bidiBackend{first: make(chan *proxyproto.SubscribeRequest, 4), ended: make(chan struct{}, 4)}
	srv := grpc.NewServer()
	proxyproto.RegisterCentrifugoProxyServer(srv, b)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	n := startNode(t, proxy.Config{
		Endpoints:                    []proxy.Endpoint{{Name: "streams", URL: "grpc://" + lis.Addr().String()}},
		SubscribeStream:              map[string]string{"plain": "streams"},
		SubscribeStreamBidirectional: map[string]bool{"plain": true},
	})
	c := n.dial(nil)
	c.Connect("bidi-user")
	c.MustSubscribe(2, "plain:chat", "")
	if r := <-b.first; r.GetChannel() != "plain:chat" || r.GetUser() != "bidi-user" {
		t.Fatalf("first message: %v", r)
	}
	if m := c.Call(`{"id":3,"publish":{"channel":"plain:chat","data":{"text":"hi"}}}`); m["publish"] == nil {
		t.Fatalf("publish into the stream: %v", m)
	}
	m := c.Next()
	if jsonclient.Compact(t, jsonclient.Path(m, "push", "pub", "data")) != `{"echo":{"text":"hi"}}` {
		t.Fatalf("want the backend's echo, got %v", m)
	}
	c.Call(`{"id":4,"unsubscribe":{"channel":"plain:chat"}}`)
	select {
	case <-b.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("unsubscribing did not end the stream")
	}
}
