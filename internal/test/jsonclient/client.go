package jsonclient

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/internal/test/testtoken"
	"github.com/heraldhq/herald/internal/test/wire"
)

// readTimeout bounds every wait for a frame: a reply or push that does
// not come fails the test instead of hanging it.
const readTimeout = 5 * time.Second

// Client is a raw JSON protocol client: it sends frames as written and
// reads frames as received, so tests can assert exact shapes and batching.
// Messages are decoded into map[string]any, as a test reads them.
type Client struct {
	t testing.TB
	w wire.Wire
	// secret signs the connection tokens of Connect (HMAC, HS256).
	secret string
	// buf holds messages read but not consumed yet by Next and Reply.
	buf []map[string]any
	// syncID numbers the sentinel commands of Drain, far above the ids
	// tests choose.
	syncID int
}

// New returns a client on w for t. secret is the HMAC key of the tokens
// Connect mints (empty if the test connects with ConnectToken or
// ConnectWith only).
func New(t testing.TB, w wire.Wire, secret string) *Client {
	return &Client{t: t, w: w, secret: secret, syncID: 1 << 30}
}

// Wire returns the connection the client speaks on.
func (c *Client) Wire() wire.Wire { return c.w }

// Send writes one frame.
func (c *Client) Send(frame string) {
	c.t.Helper()
	if err := c.w.Write([]byte(frame)); err != nil {
		c.t.Fatalf("send %s: %v", frame, err)
	}
}

// Read returns the next frame, failing the test after 5 s.
func (c *Client) Read() string {
	c.t.Helper()
	data, err := c.w.Read(readTimeout)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return string(data)
}

// ReadMsgs reads frames until n messages have arrived, and returns them
// decoded.
func (c *Client) ReadMsgs(n int) []map[string]any {
	c.t.Helper()
	if len(c.buf) > 0 {
		c.t.Fatalf("ReadMsgs with %d messages already read: %v", len(c.buf), c.buf)
	}
	var out []map[string]any
	for len(out) < n {
		out = append(out, c.DecodeFrame(c.Read())...)
	}
	if len(out) != n {
		c.t.Fatalf("want %d messages, got %d: %v", n, len(out), out)
	}
	return out
}

// ReadOne reads one frame holding exactly one message.
func (c *Client) ReadOne() map[string]any {
	c.t.Helper()
	return c.ReadMsgs(1)[0]
}

// Next returns the next message, whatever frame it came in.
func (c *Client) Next() map[string]any {
	c.t.Helper()
	if len(c.buf) == 0 {
		c.buf = c.DecodeFrame(c.Read())
	}
	m := c.buf[0]
	c.buf = c.buf[1:]
	return m
}

// Reply returns the reply with id; messages that came before it stay
// queued for Next, in order.
func (c *Client) Reply(id int) map[string]any {
	c.t.Helper()
	for i := 0; ; i++ {
		for ; i < len(c.buf); i++ {
			if Num(c.buf[i]["id"]) == int64(id) {
				m := c.buf[i]
				c.buf = append(c.buf[:i:i], c.buf[i+1:]...)
				return m
			}
		}
		c.buf = append(c.buf, c.DecodeFrame(c.Read())...)
		i--
	}
}

// Call sends one command, which must carry "id", and returns its reply.
func (c *Client) Call(cmd string) map[string]any {
	c.t.Helper()
	var probe struct {
		ID int `json:"id"`
	}
	if err := json.Unmarshal([]byte(cmd), &probe); err != nil || probe.ID == 0 {
		c.t.Fatalf("Call needs a command with an id: %s", cmd)
	}
	c.Send(cmd)
	return c.Reply(probe.ID)
}

// Drain returns every message the server queued for this client before
// now: it sends a sentinel command that always succeeds (unsubscribe from
// a channel the client is not in) and collects what comes before its
// reply. A hub answers commands in order and delivers publications and
// join/leave events synchronously with the memory engine, so anything
// caused before Drain was called arrives before the sentinel's reply.
func (c *Client) Drain() []map[string]any {
	c.t.Helper()
	c.syncID++
	c.Send(fmt.Sprintf(`{"id":%d,"unsubscribe":{"channel":"sync-sentinel"}}`, c.syncID))
	var out []map[string]any
	for {
		m := c.Next()
		if Num(m["id"]) == int64(c.syncID) {
			if _, ok := m["unsubscribe"]; !ok {
				c.t.Fatalf("sentinel reply: %v", m)
			}
			return out
		}
		out = append(out, m)
	}
}

// ExpectClose reads until the server closes the connection, skipping the
// messages queued before the close, and checks code and reason ("" for
// any reason).
func (c *Client) ExpectClose(code int, reason string) {
	c.t.Helper()
	wire.ExpectClose(c.t, c.w, code, reason)
}

// Drop makes the client go away without a close handshake.
func (c *Client) Drop() { c.w.Drop() }

// Connect sends a connect command (id 1) with a token for user signed
// with the client's secret, and returns the connect result.
func (c *Client) Connect(user string) map[string]any {
	c.t.Helper()
	return c.ConnectToken(testtoken.Connect(c.t, c.secret, auth.ConnectClaims{User: user}))
}

// ConnectToken connects with tok and returns the connect result, failing
// the test on an error reply.
func (c *Client) ConnectToken(tok string) map[string]any {
	c.t.Helper()
	m := c.ConnectWith(`{"token":"` + tok + `"}`)
	res, ok := m["connect"].(map[string]any)
	if !ok {
		c.t.Fatalf("connect failed: %v", m)
	}
	return res
}

// ConnectWith sends a connect command (id 1) with the given request body
// and returns the reply.
func (c *Client) ConnectWith(req string) map[string]any {
	c.t.Helper()
	return c.Call(`{"id":1,"connect":` + req + `}`)
}

// Subscribe subscribes with extra request fields (JSON members without
// braces, may be empty) and returns the reply.
func (c *Client) Subscribe(id int, ch, extra string) map[string]any {
	c.t.Helper()
	req := `"channel":"` + ch + `"`
	if extra != "" {
		req += "," + extra
	}
	return c.Call(fmt.Sprintf(`{"id":%d,"subscribe":{%s}}`, id, req))
}

// MustSubscribe subscribes and returns the subscribe result.
func (c *Client) MustSubscribe(id int, ch, extra string) map[string]any {
	c.t.Helper()
	m := c.Subscribe(id, ch, extra)
	res, ok := m["subscribe"].(map[string]any)
	if !ok {
		c.t.Fatalf("subscribe %s failed: %v", ch, m)
	}
	return res
}

// DecodeFrame splits a JSON frame into its messages.
func (c *Client) DecodeFrame(frame string) []map[string]any {
	c.t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(frame, "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			c.t.Fatalf("frame line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}
