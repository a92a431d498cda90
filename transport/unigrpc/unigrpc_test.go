package unigrpc_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/testtoken"
	"github.com/heraldhq/herald/transport/unigrpc"
	"github.com/heraldhq/herald/transport/unigrpc/unistream"
)

const secret = "unigrpc-test-secret"

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// env is a hub served over uni_grpc on loopback, and a client of it
// generated from unistream.proto.
type env struct {
	hub    *hub.Hub
	client unistream.CentrifugoUniStreamClient
	// headers receives the header each connection kept.
	headers chan map[string][]string
	// gone receives the user of each connected client that went away.
	gone chan string
}

func newEnv(t *testing.T, cfg unigrpc.Config) *env {
	t.Helper()
	v, err := auth.NewVerifier(auth.Config{HMACSecretKey: secret})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{headers: make(chan map[string][]string, 16), gone: make(chan string, 16)}
	hcfg := hub.Config{
		Engine: memory.New(memory.Config{}), Tokens: v, Logger: discard(),
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{HistorySize: 10, HistoryTTL: time.Minute}},
	}
	hcfg.Handlers.OnConnect = func(c *hub.Client) { e.headers <- c.Header() }
	hcfg.Handlers.OnDisconnect = func(c *hub.Client, _ hub.DisconnectEvent) { e.gone <- c.User() }
	e.hub = hubtest.Start(t, hcfg)
	cfg.Logger = discard()
	srv := grpc.NewServer()
	unigrpc.New(e.hub, cfg).Register(srv)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	e.client = unistream.NewCentrifugoUniStreamClient(conn)
	return e
}

// recv returns the stream's next push, failing after 5 s.
func recv(t *testing.T, st grpc.ServerStreamingClient[unistream.Push]) *unistream.Push {
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
		if r.err != nil {
			t.Fatalf("recv: %v", r.err)
		}
		return r.p
	case <-time.After(5 * time.Second):
		t.Fatal("no push within 5 s")
		return nil
	}
}

// TestConsume: a client with a token whose channels claim subscribes it
// gets the connect push, then the channel's publications with their
// bytes as published; a server-side disconnect arrives as the last push
// and ends the stream.
func TestConsume(t *testing.T) {
	e := newEnv(t, unigrpc.Config{KeepHeader: func(h http.Header) map[string][]string {
		return map[string][]string{"X-Tenant": h["X-Tenant"]}
	}})
	ctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(context.Background(), "x-tenant", "acme"))
	defer cancel()
	tok := testtoken.Connect(t, secret, auth.ConnectClaims{User: "u1", Channels: []string{"news"}})
	st, err := e.client.Consume(ctx, &unistream.ConnectRequest{Token: tok, Name: "go-test"})
	if err != nil {
		t.Fatal(err)
	}
	first := recv(t, st)
	if first.Connect == nil || first.Connect.Client == "" {
		t.Fatalf("want the connect push first, got %v", first)
	}
	if _, ok := first.Connect.Subs["news"]; !ok {
		t.Fatalf("connect push without the news subscription: %v", first.Connect)
	}
	if h := <-e.headers; len(h["X-Tenant"]) != 1 || h["X-Tenant"][0] != "acme" {
		t.Fatalf("kept header: %v", h)
	}
	for _, data := range []string{`{"n":1}`, `{"n":2}`} {
		if _, err := e.hub.Publish(context.Background(), "news", []byte(data), hub.PublishOptions{Tags: map[string]string{"k": "v"}}); err != nil {
			t.Fatal(err)
		}
		p := recv(t, st)
		if p.Channel != "news" || p.Pub == nil || string(p.Pub.Data) != data || p.Pub.Tags["k"] != "v" || p.Pub.Offset == 0 {
			t.Fatalf("publication push: %v", p)
		}
	}
	if err := e.hub.DisconnectUser(context.Background(), "u1", "", nil, 4000, "bye"); err != nil {
		t.Fatal(err)
	}
	last := recv(t, st)
	if last.Disconnect == nil || last.Disconnect.Code != 4000 || last.Disconnect.Reason != "bye" {
		t.Fatalf("want the disconnect push, got %v", last)
	}
	if _, err := st.Recv(); err != io.EOF {
		t.Fatalf("the stream goes on after the disconnect push: %v", err)
	}
}

// TestConsumeRefused: a bad token gets a disconnect push, and the stream
// ends; no connection is left on the hub.
func TestConsumeRefused(t *testing.T) {
	e := newEnv(t, unigrpc.Config{})
	st, err := e.client.Consume(context.Background(), &unistream.ConnectRequest{Token: "not-a-jwt"})
	if err != nil {
		t.Fatal(err)
	}
	p := recv(t, st)
	if p.Disconnect == nil || p.Disconnect.Code != 3500 {
		t.Fatalf("want disconnect 3500 (invalid token), got %v", p)
	}
	if _, err := st.Recv(); err != io.EOF {
		t.Fatalf("the stream goes on after the disconnect push: %v", err)
	}
	waitClients(t, e.hub, 0)
}

// TestClientGoesAway: a client that cancels its call is removed from the
// hub.
func TestClientGoesAway(t *testing.T) {
	e := newEnv(t, unigrpc.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	tok := testtoken.Connect(t, secret, auth.ConnectClaims{User: "u2"})
	st, err := e.client.Consume(ctx, &unistream.ConnectRequest{Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	if p := recv(t, st); p.Connect == nil {
		t.Fatalf("want the connect push, got %v", p)
	}
	cancel()
	select {
	case u := <-e.gone:
		if u != "u2" {
			t.Fatalf("%q went away, want u2", u)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the hub kept the client after it cancelled its call")
	}
	if n := e.hub.NumClients(); n != 0 {
		t.Fatalf("the hub has %d clients", n)
	}
}

// waitClients waits until the hub has n clients (a client refused before
// it connected raises no event to await).
func waitClients(t *testing.T, h *hub.Hub, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.NumClients() != n {
		if time.Now().After(deadline) {
			t.Fatalf("the hub has %d clients, want %d", h.NumClients(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
