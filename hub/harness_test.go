package hub_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/internal/test/testtoken"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/websocket"
)

const testSecret = "test-secret"

// hubTransportEnv selects how startNode's clients reach the hub: "memory"
// (the default: hubtest connections, no socket) or "websocket" (the real
// WebSocket transport on loopback), so that the whole suite runs both ways.
const hubTransportEnv = "HERALD_TEST_HUB_TRANSPORT"

// node is a hub under test and the way its clients reach it.
type node struct {
	t   *testing.T
	hub *hub.Hub
	// url is the WebSocket endpoint; empty when clients connect in memory.
	url string
}

// startNode starts a hub with cfg (memory engine and HMAC tokens unless
// cfg sets them), reached in memory or over WebSocket as hubTransportEnv
// says, and stops it when the test ends.
func startNode(t *testing.T, cfg hub.Config) *node {
	t.Helper()
	switch v := os.Getenv(hubTransportEnv); v {
	case "", "memory":
		return startNodeMem(t, cfg)
	case "websocket":
		return startNodeWS(t, cfg, websocket.Config{})
	default:
		t.Fatalf("%s=%q: want memory or websocket", hubTransportEnv, v)
		return nil
	}
}

// startNodeMem is startNode with clients on in-memory connections,
// whatever hubTransportEnv says: for tests that stall or break writes.
func startNodeMem(t *testing.T, cfg hub.Config) *node {
	t.Helper()
	return &node{t: t, hub: hubtest.Start(t, withTestDefaults(t, cfg))}
}

// startNodeWS is startNode over the real WebSocket transport with a
// transport configuration, for tests about the socket.
func startNodeWS(t *testing.T, cfg hub.Config, wsCfg websocket.Config) *node {
	t.Helper()
	h := newTestHub(t, cfg)
	if wsCfg.Logger == nil {
		wsCfg.Logger = testLogger()
	}
	if wsCfg.Poller == "" {
		wsCfg.Poller = websocket.Poller(testenv.WebSocketPoller())
	}
	ws, err := websocket.NewServer(wsCfg, func(c *websocket.Conn, r *http.Request) websocket.Receiver {
		return h.NewClient(c, c.RemoteAddr())
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ws)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := ws.Close(); err != nil {
			t.Errorf("websocket close: %v", err)
		}
	})
	return &node{t: t, hub: h, url: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

// newTestHub creates and starts a hub with the test defaults; the caller
// shuts it down.
func newTestHub(t *testing.T, cfg hub.Config) *hub.Hub {
	t.Helper()
	h, err := hub.New(withTestDefaults(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return h
}

// withTestDefaults is cfg with the memory engine, HMAC tokens with
// testSecret and testLogger where cfg sets none.
func withTestDefaults(t *testing.T, cfg hub.Config) hub.Config {
	t.Helper()
	if cfg.Engine == nil {
		cfg.Engine = memory.New(memory.Config{})
	}
	if cfg.Tokens == nil {
		v, err := auth.NewVerifier(auth.Config{HMACSecretKey: testSecret})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tokens = v
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger()
	}
	return cfg
}

// testLogger discards logs unless HERALD_TEST_LOG is set: hub goroutines
// may log after a test ends, so t.Log cannot be used.
func testLogger() *slog.Logger {
	if os.Getenv("HERALD_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// token mints a connection token with the test secret.
func token(t *testing.T, c auth.ConnectClaims) string { return testtoken.Connect(t, testSecret, c) }

// subToken mints a subscription token with the test secret.
func subToken(t *testing.T, c auth.SubscribeClaims) string {
	return testtoken.Subscribe(t, testSecret, c)
}

// rawClient is the shared JSON protocol client (internal/test/jsonclient),
// with connection tokens signed by the test secret.
type rawClient = jsonclient.Client

// dial connects a JSON client.
func (n *node) dial(t *testing.T) *rawClient {
	t.Helper()
	return jsonclient.New(t, n.dialWire(t, protocol.TypeJSON), testSecret)
}

// dialWire opens a connection with encoding proto, in memory or over
// WebSocket as the node is served; the client goes away when t ends.
func (n *node) dialWire(t *testing.T, proto protocol.Type) wire.Wire {
	t.Helper()
	if n.url == "" {
		conn, _ := hubtest.Dial(n.hub, proto)
		t.Cleanup(conn.Drop)
		return wire.Mem(conn)
	}
	return wire.Dial(t, n.url, proto)
}

// dialMem connects a JSON client in memory and returns its connection
// too, to stall or break its writes; the node must be served in memory.
func (n *node) dialMem(t *testing.T) (*rawClient, *hubtest.Conn) {
	t.Helper()
	if n.url != "" {
		t.Fatal("dialMem on a node served over WebSocket: start it with startNodeMem")
	}
	conn, _ := hubtest.Dial(n.hub, protocol.TypeJSON)
	t.Cleanup(conn.Drop)
	return jsonclient.New(t, wire.Mem(conn), testSecret), conn
}

// dialDialer connects a JSON client over WebSocket with a custom gorilla
// dialer (socket options); the node must be served over WebSocket.
func (n *node) dialDialer(t *testing.T, d *gws.Dialer, header http.Header) *rawClient {
	t.Helper()
	if n.url == "" {
		t.Fatal("dialDialer on a node served in memory: start it with startNodeWS")
	}
	conn := wire.DialWith(t, d, n.url, header)
	return jsonclient.New(t, wire.WebSocket(conn, protocol.TypeJSON), testSecret)
}

// disconnects collects the ids of clients whose close the hub has
// finished: OnDisconnect runs once a client has left its channels and the
// hub's counts, so tests await it instead of polling them.
type disconnects chan string

func newDisconnects() disconnects { return make(chan string, 64) }

// handler is an OnDisconnect handler that records the client's id.
func (d disconnects) handler(c *hub.Client, _ hub.DisconnectEvent) {
	select {
	case d <- c.ID():
	default: // more than the tests await; dropping cannot block the hub
	}
}

// await waits until the hub has finished closing every client in ids,
// failing the test after 5 s; other clients' disconnects are skipped.
func (d disconnects) await(t *testing.T, ids ...string) {
	t.Helper()
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	timeout := time.NewTimer(5 * time.Second)
	defer timeout.Stop()
	for len(want) > 0 {
		select {
		case id := <-d:
			delete(want, id)
		case <-timeout.C:
			t.Fatalf("timed out waiting for the disconnect of %v", want)
		}
	}
}

// recv returns the next value from ch, failing the test after 5 s: a
// handler may run after the command that caused it was sent.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// ptr returns a pointer to v, for optional claims.
func ptr[T any](v T) *T { return &v }
