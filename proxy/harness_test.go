package proxy_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/proxy"
)

const testSecret = "proxy-test-secret"

// call is one request the backend received.
type call struct {
	path   string
	tls    *tls.ConnectionState
	header http.Header
	body   map[string]any
}

// backend is the application side: a real HTTP server whose answer to
// each path the test sets, recording every request.
type backend struct {
	t     *testing.T
	srv   *httptest.Server
	calls chan call
	mu    sync.Mutex
	// answers maps a path to its handler; absent paths answer 404.
	answers map[string]http.HandlerFunc
}

func newBackend(t *testing.T) *backend {
	b := &backend{t: t, calls: make(chan call, 256), answers: map[string]http.HandlerFunc{}}
	b.srv = httptest.NewServer(b.handler())
	t.Cleanup(b.srv.Close)
	return b
}

// handler records each request and answers it as the test set.
func (b *backend) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		b.calls <- call{path: r.URL.Path, tls: r.TLS, header: r.Header.Clone(), body: body}
		b.mu.Lock()
		fn := b.answers[r.URL.Path]
		b.mu.Unlock()
		if fn == nil {
			http.NotFound(w, r)
			return
		}
		fn(w, r)
	})
}

// answer makes path answer with the JSON text body.
func (b *backend) answer(path, body string) {
	b.handle(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	})
}

func (b *backend) handle(path string, fn http.HandlerFunc) {
	b.mu.Lock()
	b.answers[path] = fn
	b.mu.Unlock()
}

func (b *backend) url(path string) string { return b.srv.URL + path }

// next returns the next request the backend received.
func (b *backend) next() call {
	b.t.Helper()
	select {
	case c := <-b.calls:
		return c
	case <-time.After(5 * time.Second):
		b.t.Fatal("the backend received no request")
		return call{}
	}
}

// endpoints names one endpoint per event path of b.
func (b *backend) endpoints(mod func(*proxy.Endpoint)) []proxy.Endpoint {
	var out []proxy.Endpoint
	for _, ev := range []string{"connect", "refresh", "subscribe", "publish", "sub_refresh", "rpc", "rpc_ns"} {
		e := proxy.Endpoint{Name: ev, URL: b.url("/" + ev), Timeout: 2 * time.Second}
		if mod != nil {
			mod(&e)
		}
		out = append(out, e)
	}
	return out
}

// fullConfig proxies every event: namespace "px" and the channels
// without namespace through the backend, namespace "plain" not at all.
func fullConfig(b *backend, mod func(*proxy.Endpoint)) proxy.Config {
	return proxy.Config{
		Endpoints: b.endpoints(mod),
		Connect:   "connect", Refresh: "refresh",
		Subscribe:     map[string]string{"": "subscribe", "px": "subscribe"},
		Publish:       map[string]string{"": "publish", "px": "publish"},
		SubRefresh:    map[string]string{"": "sub_refresh", "px": "sub_refresh"},
		RPC:           "rpc",
		RPCNamespaces: map[string]string{"ns": "rpc_ns", "off": ""},
	}
}

// node is a hub with a proxy router installed.
type node struct {
	t      *testing.T
	hub    *hub.Hub
	router *proxy.Router
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func startNode(t *testing.T, cfg proxy.Config) *node {
	t.Helper()
	return startNodeWith(t, cfg, hub.ChannelConfig{
		WithoutNamespace: hub.NamespaceOptions{Presence: true, AllowPresenceForSubscriber: true, HistorySize: 10, HistoryTTL: time.Minute, AllowHistoryForSubscriber: true},
		Namespaces:       []hub.Namespace{{Name: "px", NamespaceOptions: hub.NamespaceOptions{Presence: true, AllowPresenceForSubscriber: true}}, {Name: "plain", NamespaceOptions: hub.NamespaceOptions{AllowSubscribeForClient: true}}},
	})
}

// startNodeWith starts a node whose router is made of cfg, with channels.
func startNodeWith(t *testing.T, cfg proxy.Config, channels hub.ChannelConfig) *node {
	t.Helper()
	cfg.Logger = discard()
	r, err := proxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	v, err := auth.NewVerifier(auth.Config{HMACSecretKey: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.Start(t, hub.Config{
		Engine: memory.New(memory.Config{}), Tokens: v, Logger: discard(), Handlers: r.Handlers(), Channels: channels,
		KeepConnectHeaders: proxy.EmulatedHeaderNames(cfg.Endpoints),
	})
	return &node{t: t, hub: h, router: r}
}

// client is the shared JSON protocol client (internal/test/jsonclient) on an
// in-memory connection, with the hub's side of it.
type client struct {
	*jsonclient.Client
	t    *testing.T
	conn *hubtest.Conn
	c    *hub.Client
}

// dial opens a client whose HTTP request carried header.
func (n *node) dial(header http.Header) *client {
	conn := hubtest.NewConn(protocol.TypeJSON)
	c := n.hub.Open(conn, hub.ConnInfo{RemoteAddr: "test", Transport: hub.TransportWebSocket, Header: header})
	conn.Attach(c)
	n.t.Cleanup(conn.Drop)
	return &client{Client: jsonclient.New(n.t, wire.Mem(conn), testSecret), t: n.t, conn: conn, c: c}
}

// connectOK connects through the connect proxy, which answers result.
func (c *client) connectOK(b *backend, result string) map[string]any {
	c.t.Helper()
	b.answer("/connect", `{"result":`+result+`}`)
	m := c.Call(`{"id":1,"connect":{}}`)
	b.next()
	res, ok := m["connect"].(map[string]any)
	if !ok {
		c.t.Fatalf("connect failed: %v", m)
	}
	return res
}

// signer mints tokens with the test secret.
func signer(t *testing.T) *auth.Signer {
	t.Helper()
	s, err := auth.NewHMACSigner(testSecret, "HS256")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// noCall checks that the backend received nothing more.
func (b *backend) noCall() {
	b.t.Helper()
	select {
	case c := <-b.calls:
		b.t.Fatalf("unexpected request to the backend: %s %v", c.path, c.body)
	default:
	}
}

// in returns a Unix time d from now, as JSON.
func in(d time.Duration) string { return fmt.Sprint(time.Now().Add(d).Unix()) }
