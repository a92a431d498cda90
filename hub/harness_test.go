package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
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
	h, err := hub.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ws, err := websocket.NewServer(websocket.Config{}, func(c *websocket.Conn, r *http.Request) websocket.Session {
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
}

func (n *node) dial(t *testing.T) *wsClient {
	t.Helper()
	return n.dialWith(t, nil)
}

func (n *node) dialWith(t *testing.T, header http.Header) *wsClient {
	t.Helper()
	d := gws.Dialer{HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial(n.url, header)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	resp.Body.Close()
	t.Cleanup(func() { conn.Close() })
	return &wsClient{t: t, conn: conn}
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
	_ = c.conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	for {
		_, data, err := c.conn.ReadMessage()
		if err == nil {
			continue // messages queued before the close
		}
		var ce *gws.CloseError
		if !errors.As(err, &ce) {
			c.t.Fatalf("want close %d %q, got %v (last data %q)", code, reason, err, data)
		}
		if ce.Code != code || (reason != "" && ce.Text != reason) {
			c.t.Fatalf("want close %d %q, got %d %q", code, reason, ce.Code, ce.Text)
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
