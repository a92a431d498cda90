package hub_test

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/heraldhq/herald/transport/websocket"
)

const testSecret = "test-secret"

// node is a hub served over the real WebSocket transport on loopback.
type node struct {
	t   *testing.T
	hub *hub.Hub
	url string
}

// startNode starts a hub with cfg (memory engine and HMAC tokens unless
// cfg sets them) and stops it when the test ends.
func startNode(t *testing.T, cfg hub.Config) *node {
	t.Helper()
	return startNodeWS(t, cfg, websocket.Config{})
}

// startNodeWS is startNode with a WebSocket transport configuration.
func startNodeWS(t *testing.T, cfg hub.Config, wsCfg websocket.Config) *node {
	t.Helper()
	if cfg.Engine == nil {
		cfg.Engine = memory.New(memory.Options{})
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
	if wsCfg.Logger == nil {
		wsCfg.Logger = testLogger()
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

// wsClient is a raw protocol client: it sends frames as written and reads
// frames as received, so tests can assert exact shapes and batching.
type wsClient struct {
	t    *testing.T
	conn *gws.Conn
	// buf holds messages read but not consumed yet by next and reply.
	buf []map[string]any
	// syncID numbers the sentinel commands of drain.
	syncID int
}

func (n *node) dial(t *testing.T) *wsClient {
	t.Helper()
	return n.dialWith(t, nil)
}

func (n *node) dialWith(t *testing.T, header http.Header) *wsClient {
	t.Helper()
	return n.dialDialer(t, &gws.Dialer{HandshakeTimeout: 5 * time.Second}, header)
}

// dialDialer dials with a custom gorilla dialer (subprotocols, socket
// options).
func (n *node) dialDialer(t *testing.T, d *gws.Dialer, header http.Header) *wsClient {
	t.Helper()
	conn, resp, err := d.Dial(n.url, header)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	resp.Body.Close()
	t.Cleanup(func() { conn.Close() })
	return &wsClient{t: t, conn: conn, syncID: 1 << 30}
}

// send writes one text frame.
func (c *wsClient) send(frame string) {
	c.t.Helper()
	if err := c.conn.WriteMessage(gws.TextMessage, []byte(frame)); err != nil {
		c.t.Fatalf("send %s: %v", frame, err)
	}
}

// read returns the next frame, failing the test after 5 s.
func (c *wsClient) read() string {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := c.conn.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return string(data)
}

// readMsgs reads frames until n messages have arrived, and returns them
// decoded.
func (c *wsClient) readMsgs(n int) []map[string]any {
	c.t.Helper()
	if len(c.buf) > 0 {
		c.t.Fatalf("readMsgs with %d messages already read: %v", len(c.buf), c.buf)
	}
	var out []map[string]any
	for len(out) < n {
		for _, line := range strings.Split(c.read(), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				c.t.Fatalf("frame line %q: %v", line, err)
			}
			out = append(out, m)
		}
	}
	if len(out) != n {
		c.t.Fatalf("want %d messages, got %d: %v", n, len(out), out)
	}
	return out
}

// readOne reads one frame holding exactly one message.
func (c *wsClient) readOne() map[string]any {
	c.t.Helper()
	return c.readMsgs(1)[0]
}

// expectClose reads until the server closes, and checks code and reason.
func (c *wsClient) expectClose(code int, reason string) {
	c.t.Helper()
	expectCloseConn(c.t, c.conn, code, reason)
}

// expectCloseConn reads conn until the server closes it, skipping the
// messages queued before the close, and checks code and reason ("" for
// any reason).
func expectCloseConn(t *testing.T, conn *gws.Conn, code int, reason string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	for {
		_, data, err := conn.ReadMessage()
		if err == nil {
			continue // messages queued before the close
		}
		var ce *gws.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("want close %d %q, got %v (last data %q)", code, reason, err, data)
		}
		if ce.Code != code || (reason != "" && ce.Text != reason) {
			t.Fatalf("want close %d %q, got %d %q", code, reason, ce.Code, ce.Text)
		}
		return
	}
}

// connect sends a connect command with a token for user and returns the
// connect result.
func (c *wsClient) connect(user string) map[string]any {
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

// waitFor polls cond until it holds or 5 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// decodeFrame splits a JSON frame into its messages.
func (c *wsClient) decodeFrame(frame string) []map[string]any {
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
func (c *wsClient) next() map[string]any {
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
func (c *wsClient) reply(id int) map[string]any {
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
func (c *wsClient) call(cmd string) map[string]any {
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
func (c *wsClient) drain() []map[string]any {
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
func (c *wsClient) connectWith(req string) map[string]any {
	c.t.Helper()
	return c.call(`{"id":1,"connect":` + req + `}`)
}

// connectToken connects with tok and returns the connect result, failing
// the test on an error reply.
func (c *wsClient) connectToken(tok string) map[string]any {
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
func (c *wsClient) subscribe(id int, ch, extra string) map[string]any {
	c.t.Helper()
	req := `"channel":"` + ch + `"`
	if extra != "" {
		req += "," + extra
	}
	return c.call(fmt.Sprintf(`{"id":%d,"subscribe":{%s}}`, id, req))
}

// mustSubscribe subscribes and returns the subscribe result.
func (c *wsClient) mustSubscribe(id int, ch, extra string) map[string]any {
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
