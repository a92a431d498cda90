package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/heraldhq/herald/internal/testenv"
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
	h := newTestHub(t, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return &node{t: t, hub: h}
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
	ws, err := websocket.NewServer(wsCfg, func(c *websocket.Conn, r *http.Request) websocket.Session {
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

// newTestHub creates and starts a hub with the test defaults.
func newTestHub(t *testing.T, cfg hub.Config) *hub.Hub {
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
	h, err := hub.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return h
}

// testLogger discards logs unless HERALD_TEST_LOG is set: hub goroutines
// may log after a test ends, so t.Log cannot be used.
func testLogger() *slog.Logger {
	if os.Getenv("HERALD_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// token mints a connection token for user with the test secret.
func token(t *testing.T, c auth.ConnectClaims) string {
	t.Helper()
	s, err := auth.NewHMACSigner(testSecret, "HS256")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.ConnectToken(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func subToken(t *testing.T, c auth.SubscribeClaims) string {
	t.Helper()
	s, err := auth.NewHMACSigner(testSecret, "HS256")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.SubscribeToken(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// rawClient is a raw protocol client: it sends frames as written and
// reads frames as received, so tests can assert exact shapes and batching.
type rawClient struct {
	t *testing.T
	w wire
	// buf holds messages read but not consumed yet by next and reply.
	buf []map[string]any
	// syncID numbers the sentinel commands of drain.
	syncID int
}

// dial connects a JSON client.
func (n *node) dial(t *testing.T) *rawClient {
	t.Helper()
	return &rawClient{t: t, w: n.dialWire(t, protocol.TypeJSON), syncID: 1 << 30}
}

// dialWire opens a connection with encoding proto, in memory or over
// WebSocket as the node is served; the client goes away when t ends.
func (n *node) dialWire(t *testing.T, proto protocol.Type) wire {
	t.Helper()
	if n.url == "" {
		conn, _ := hubtest.Dial(n.hub, proto)
		t.Cleanup(conn.Drop)
		return memWire{conn: conn}
	}
	d := &gws.Dialer{HandshakeTimeout: 5 * time.Second}
	if proto == protocol.TypeProtobuf {
		d.Subprotocols = []string{websocket.SubprotocolProtobuf}
	}
	conn := n.dialWS(t, d, nil)
	if proto == protocol.TypeProtobuf && conn.Subprotocol() != websocket.SubprotocolProtobuf {
		t.Fatalf("subprotocol echoed: %q", conn.Subprotocol())
	}
	return wsWire{conn: conn, proto: proto}
}

// dialMem connects a JSON client in memory and returns its connection
// too, to stall or break its writes; the node must be served in memory.
func (n *node) dialMem(t *testing.T) (*rawClient, *hubtest.Conn) {
	t.Helper()
	if n.url != "" {
		t.Fatal("dialMem on a node served over WebSocket: start it with startNodeMem")
	}
	w := n.dialWire(t, protocol.TypeJSON).(memWire)
	return &rawClient{t: t, w: w, syncID: 1 << 30}, w.conn
}

// dialDialer connects a JSON client over WebSocket with a custom gorilla
// dialer (socket options); the node must be served over WebSocket.
func (n *node) dialDialer(t *testing.T, d *gws.Dialer, header http.Header) *rawClient {
	t.Helper()
	return &rawClient{t: t, w: wsWire{conn: n.dialWS(t, d, header)}, syncID: 1 << 30}
}

// dialWS dials the node's WebSocket endpoint.
func (n *node) dialWS(t *testing.T, d *gws.Dialer, header http.Header) *gws.Conn {
	t.Helper()
	if n.url == "" {
		t.Fatal("dialWS on a node served in memory: start it with startNodeWS")
	}
	conn, resp, err := d.Dial(n.url, header)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	resp.Body.Close()
	t.Cleanup(func() { conn.Close() })
	return conn
}

// send writes one frame.
func (c *rawClient) send(frame string) {
	c.t.Helper()
	if err := c.w.write([]byte(frame)); err != nil {
		c.t.Fatalf("send %s: %v", frame, err)
	}
}

// read returns the next frame, failing the test after 5 s.
func (c *rawClient) read() string {
	c.t.Helper()
	data, err := c.w.read(5 * time.Second)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return string(data)
}

// readMsgs reads frames until n messages have arrived, and returns them
// decoded.
func (c *rawClient) readMsgs(n int) []map[string]any {
	c.t.Helper()
	if len(c.buf) > 0 {
		c.t.Fatalf("readMsgs with %d messages already read: %v", len(c.buf), c.buf)
	}
	var out []map[string]any
	for len(out) < n {
		out = append(out, c.decodeFrame(c.read())...)
	}
	if len(out) != n {
		c.t.Fatalf("want %d messages, got %d: %v", n, len(out), out)
	}
	return out
}

// readOne reads one frame holding exactly one message.
func (c *rawClient) readOne() map[string]any {
	c.t.Helper()
	return c.readMsgs(1)[0]
}

// expectClose reads until the server closes, and checks code and reason.
func (c *rawClient) expectClose(code int, reason string) {
	c.t.Helper()
	expectCloseWire(c.t, c.w, code, reason)
}

// drop makes the client go away without a close handshake.
func (c *rawClient) drop() { c.w.drop() }

// connect sends a connect command with a token for user and returns the
// connect result.
func (c *rawClient) connect(user string) map[string]any {
	c.t.Helper()
	c.send(`{"id":1,"connect":{"token":"` + token(c.t, auth.ConnectClaims{User: user}) + `"}}`)
	m := c.readOne()
	res, ok := m["connect"].(map[string]any)
	if !ok {
		c.t.Fatalf("connect failed: %v", m)
	}
	return res
}

// errorCode returns the code of an error reply, or 0.
func errorCode(m map[string]any) int {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	return int(e["code"].(float64))
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

// decodeFrame splits a JSON frame into its messages.
func (c *rawClient) decodeFrame(frame string) []map[string]any {
	c.t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(frame, "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			c.t.Fatalf("frame line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// next returns the next message, whatever frame it came in.
func (c *rawClient) next() map[string]any {
	c.t.Helper()
	if len(c.buf) == 0 {
		c.buf = c.decodeFrame(c.read())
	}
	m := c.buf[0]
	c.buf = c.buf[1:]
	return m
}

// reply returns the reply with id; messages that came before it stay
// queued for next, in order.
func (c *rawClient) reply(id int) map[string]any {
	c.t.Helper()
	for i := 0; ; i++ {
		for ; i < len(c.buf); i++ {
			if num(c.buf[i]["id"]) == int64(id) {
				m := c.buf[i]
				c.buf = append(c.buf[:i:i], c.buf[i+1:]...)
				return m
			}
		}
		c.buf = append(c.buf, c.decodeFrame(c.read())...)
		i--
	}
}

// call sends one command, which must carry "id", and returns its reply.
func (c *rawClient) call(cmd string) map[string]any {
	c.t.Helper()
	var probe struct {
		ID int `json:"id"`
	}
	if err := json.Unmarshal([]byte(cmd), &probe); err != nil || probe.ID == 0 {
		c.t.Fatalf("call needs a command with an id: %s", cmd)
	}
	c.send(cmd)
	return c.reply(probe.ID)
}

// drain returns every message the server queued for this client before
// now: it sends a sentinel command that always succeeds (unsubscribe from
// a channel the client is not in) and collects what comes before its
// reply. The hub answers commands in order and delivers publications and
// join/leave events synchronously with the memory engine, so anything
// caused before drain was called arrives before the sentinel's reply.
func (c *rawClient) drain() []map[string]any {
	c.t.Helper()
	c.syncID++
	c.send(fmt.Sprintf(`{"id":%d,"unsubscribe":{"channel":"sync-sentinel"}}`, c.syncID))
	var out []map[string]any
	for {
		m := c.next()
		if num(m["id"]) == int64(c.syncID) {
			if _, ok := m["unsubscribe"]; !ok {
				c.t.Fatalf("sentinel reply: %v", m)
			}
			return out
		}
		out = append(out, m)
	}
}

// connectWith sends a connect command with the given request body and
// returns the reply.
func (c *rawClient) connectWith(req string) map[string]any {
	c.t.Helper()
	return c.call(`{"id":1,"connect":` + req + `}`)
}

// connectToken connects with tok and returns the connect result, failing
// the test on an error reply.
func (c *rawClient) connectToken(tok string) map[string]any {
	c.t.Helper()
	m := c.connectWith(`{"token":"` + tok + `"}`)
	res, ok := m["connect"].(map[string]any)
	if !ok {
		c.t.Fatalf("connect failed: %v", m)
	}
	return res
}

// subscribe subscribes with extra request fields (JSON members without
// braces, may be empty) and returns the reply.
func (c *rawClient) subscribe(id int, ch, extra string) map[string]any {
	c.t.Helper()
	req := `"channel":"` + ch + `"`
	if extra != "" {
		req += "," + extra
	}
	return c.call(fmt.Sprintf(`{"id":%d,"subscribe":{%s}}`, id, req))
}

// mustSubscribe subscribes and returns the subscribe result.
func (c *rawClient) mustSubscribe(id int, ch, extra string) map[string]any {
	c.t.Helper()
	m := c.subscribe(id, ch, extra)
	res, ok := m["subscribe"].(map[string]any)
	if !ok {
		c.t.Fatalf("subscribe %s failed: %v", ch, m)
	}
	return res
}

// wantError checks that m is an error reply with code.
func wantError(t *testing.T, m map[string]any, code int) {
	t.Helper()
	if got := errorCode(m); got != code {
		t.Fatalf("want error %d, got %v", code, m)
	}
}

// path walks nested JSON objects; nil when a key is missing.
func path(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[k]
	}
	return v
}

// num converts a decoded JSON number to int64; -1 when v is not a number.
func num(v any) int64 {
	f, ok := v.(float64)
	if !ok {
		return -1
	}
	return int64(f)
}

// compact re-encodes JSON without spaces, for comparing payloads.
func compact(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pushesOf picks the pushes of kind ("pub", "join", ...) in channel ch.
func pushesOf(msgs []map[string]any, ch, kind string) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		if path(m, "push", "channel") == ch {
			if p, ok := path(m, "push", kind).(map[string]any); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// ptr returns a pointer to v, for optional claims.
func ptr[T any](v T) *T { return &v }
