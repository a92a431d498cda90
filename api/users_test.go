package api_test

import (
	"time"

	"strings"
	"testing"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestDisconnect(t *testing.T) {
	n := startNode(t, api.Config{})

	// Default: 3503 force disconnect, for every connection of the user.
	a1, a2, b := n.dial(t, "alice"), n.dial(t, "alice"), n.dial(t, "bob")
	n.expect(t, "disconnect", `{"user":"alice"}`, `{"result":{}}`)
	a1.ExpectClose(3503, "force disconnect")
	a2.ExpectClose(3503, "force disconnect")
	b.expectOpen()

	// A custom code and reason, one client only.
	c1, c2 := n.dial(t, "carol"), n.dial(t, "carol")
	n.expect(t, "disconnect", `{"user":"carol","client":"`+c1.id+`","disconnect":{"code":4500,"reason":"bye"}}`, `{"result":{}}`)
	c1.ExpectClose(4500, "bye")
	c2.expectOpen()

	// The whitelist keeps connections.
	d1, d2 := n.dial(t, "dave"), n.dial(t, "dave")
	n.expect(t, "disconnect", `{"user":"dave","whitelist":["`+d2.id+`"],"disconnect":{"code":4000,"reason":"reconnect"}}`, `{"result":{}}`)
	d1.ExpectClose(4000, "reconnect")
	d2.expectOpen()
}

func TestDisconnectErrors(t *testing.T) {
	n := startNode(t, api.Config{})
	for _, c := range []struct {
		body string
		code int
		msg  string
	}{
		{`{}`, 107, "user required (or client or session, for an anonymous connection)"},
		{`{"user":"u","disconnect":{"code":1000,"reason":"x"}}`, 107, "disconnect.code: want 3000–4999, got 1000"},
		{`{"user":"u","disconnect":{"code":5000}}`, 107, "disconnect.code: want 3000–4999, got 5000"},
		{`{"user":"u","disconnect":{"code":4000,"reason":"` + strings.Repeat("r", 124) + `"}}`, 107, "disconnect.reason: at most 123 bytes (the WebSocket close frame limit), got 124"},
	} {
		if got := n.expectError(t, "disconnect", c.body, c.code); got != c.msg {
			t.Errorf("%s: message %q, want %q", c.body, got, c.msg)
		}
	}
}

func TestUnsubscribe(t *testing.T) {
	n := startNode(t, api.Config{})
	a1, a2, b := n.dial(t, "alice"), n.dial(t, "alice"), n.dial(t, "bob")
	for _, c := range []*wsClient{a1, a2, b} {
		c.subscribe("chat")
	}
	const push = `{"push":{"channel":"chat","unsubscribe":{"code":2000,"reason":"server unsubscribe"}}}`

	n.expect(t, "unsubscribe", `{"user":"alice","channel":"chat","client":"`+a1.id+`"}`, `{"result":{}}`)
	if got := a1.Read(); got != push {
		t.Fatalf("a1: %s, want %s", got, push)
	}
	a2.expectOpen()

	n.expect(t, "unsubscribe", `{"user":"alice","channel":"chat"}`, `{"result":{}}`)
	if got := a2.Read(); got != push {
		t.Fatalf("a2: %s, want %s", got, push)
	}
	testenv.Eventually(t, "one subscriber left", 5*time.Second, func() bool { return n.hub.Channels()["chat"] == 1 })

	// Publications reach only the client still subscribed.
	n.call(t, "publish", `{"channel":"chat","data":1}`)
	if got := b.Read(); !strings.Contains(got, `"pub":{"data":1`) {
		t.Fatalf("b: %s", got)
	}
	a1.expectOpen()
	a2.expectOpen()
}

func TestUnsubscribeErrors(t *testing.T) {
	n := startNode(t, api.Config{})
	for _, c := range []struct {
		body string
		code int
		msg  string
	}{
		{`{"channel":"chat"}`, 107, "user required (or client or session, for an anonymous connection)"},
		{`{"user":"u","channel":5}`, 107, "channel: want string, got number"},
	} {
		if got := n.expectError(t, "unsubscribe", c.body, c.code); got != c.msg {
			t.Errorf("%s: message %q, want %q", c.body, got, c.msg)
		}
	}
}

func TestServerSideErrors(t *testing.T) {
	n := startNode(t, api.Config{})
	for _, c := range []struct {
		method, body string
		code         int
		msg          string
	}{
		{"subscribe", `{"user":"u"}`, 107, "channel required"},
		{"subscribe", `{"channel":"chat"}`, 107, "user required (or client or session, for an anonymous connection)"},
		{"subscribe", `{"channel":"nope:x","user":"u"}`, 102, "unknown channel"},
		{"subscribe", `{"channel":"chat","user":"u","override":{"presense":{"value":true}}}`, 107, "override: json: unknown field \"presense\""},
		{"subscribe", `{"channel":"chat","user":"u","override":{"presence":true}}`, 107, "override.presence: want object, got bool"},
		{"refresh", `{}`, 107, "user required (or client or session, for an anonymous connection)"},
		{"rpc", `{"method":"m","params":{}}`, 108, "not available: rpc: the server API has no RPC methods"},
	} {
		if got := n.expectError(t, c.method, c.body, c.code); !strings.HasPrefix(got, c.msg) {
			t.Errorf("%s %s: message %q, want %q", c.method, c.body, got, c.msg)
		}
	}
}

// TestServerSideSubscribe subscribes a connected user through the API: the
// client gets the subscribe push, then the channel's publications.
func TestServerSideSubscribe(t *testing.T) {
	n := startNode(t, api.Config{})
	c := n.dial(t, "alice")
	n.expect(t, "subscribe", `{"channel":"chat","user":"alice","data":{"welcome":1}}`, `{"result":{}}`)
	m := c.ReadOne()
	push, _ := m["push"].(map[string]any)
	sub, ok := push["subscribe"].(map[string]any)
	if !ok || push["channel"] != "chat" || sub["data"].(map[string]any)["welcome"] != float64(1) {
		t.Fatalf("want a subscribe push for chat with data, got %v", m)
	}
	n.call(t, "publish", `{"channel":"chat","data":{"n":1}}`)
	m = c.ReadOne()
	if pub := m["push"].(map[string]any)["pub"]; pub == nil {
		t.Fatalf("want the publication, got %v", m)
	}
	n.expect(t, "unsubscribe", `{"user":"alice"}`, `{"result":{}}`)
	m = c.ReadOne()
	if u := m["push"].(map[string]any)["unsubscribe"]; u == nil {
		t.Fatalf("want an unsubscribe push after unsubscribe from every channel, got %v", m)
	}
}

// TestServerSideRefresh expires a user's connection through the API.
func TestServerSideRefresh(t *testing.T) {
	n := startNode(t, api.Config{})
	c := n.dial(t, "bob")
	n.expect(t, "refresh", `{"user":"bob","expire_at":4102444800}`, `{"result":{}}`)
	c.expectOpen()
	n.expect(t, "refresh", `{"user":"bob","expired":true}`, `{"result":{}}`)
	c.ExpectClose(3005, "connection expired")
}
