package proxy_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/proxy"
)

// TestConnect: a client without a token is authenticated by the backend,
// which sees Centrifugo's request fields and the forwarded, emulated and
// static headers; every field of its result reaches the connection.
func TestConnect(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startNode(t, fullConfig(b, func(e *proxy.Endpoint) {
		e.HTTPHeaders = []string{"Cookie", "authorization", "X-Emulated"}
		e.StaticHTTPHeaders = map[string]string{"X-Secret": "s3"}
		e.IncludeConnectionMeta = true
	}))
	c := n.dial(http.Header{"Cookie": {"sid=abc"}, "Authorization": {"Bearer t"}, "X-Other": {"not forwarded"}})
	b.answer("/connect", `{"result":{"user":"u1","expire_at":`+in(time.Hour)+`,"info":{"name":"Ann"},"data":{"welcome":true},`+
		`"channels":["news"],"subs":{"px:room":{"info":{"r":1},"data":{"d":2}},"px:hidden":{"override":{"presence":{"value":false}}}},"meta":{"tenant":"t1"}}}`)
	m := c.Call(`{"id":1,"connect":{"name":"js","version":"5.0","data":{"hello":1},"headers":{"x-emulated":"e1","cookie":"ignored"}}}`)
	req := b.next()
	if req.path != "/connect" {
		t.Fatalf("connect went to %s", req.path)
	}
	want := map[string]string{"client": c.c.ID(), "transport": "websocket", "protocol": "json", "encoding": "json", "name": "js", "version": "5.0"}
	for k, v := range want {
		if req.body[k] != v {
			t.Errorf("connect request %s = %v, want %q (body %v)", k, req.body[k], v, req.body)
		}
	}
	if jsonclient.Compact(t, req.body["data"]) != `{"hello":1}` || req.body["b64data"] != nil {
		t.Errorf("connect request data: %v", req.body)
	}
	for k, v := range map[string]string{"Cookie": "sid=abc", "Authorization": "Bearer t", "X-Emulated": "e1", "X-Secret": "s3", "Content-Type": "application/json"} {
		if got := req.header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if req.header.Get("X-Other") != "" {
		t.Errorf("a header not listed in http_headers was forwarded")
	}

	res, ok := m["connect"].(map[string]any)
	if !ok {
		t.Fatalf("connect failed: %v", m)
	}
	// The expiry is the hub's to renew through the refresh proxy
	// (server-side, as Centrifugo): the client is not told.
	if res["client"] != c.c.ID() || jsonclient.Compact(t, res["data"]) != `{"welcome":true}` || res["expires"] != nil {
		t.Fatalf("connect result: %v", res)
	}
	subs, _ := res["subs"].(map[string]any)
	if subs["news"] == nil || subs["px:room"] == nil {
		t.Fatalf("server-side subscriptions from channels and subs: %v", res)
	}
	if jsonclient.Compact(t, subs["px:room"].(map[string]any)["data"]) != `{"d":2}` {
		t.Fatalf("subs data: %v", subs["px:room"])
	}
	if c.c.User() != "u1" || string(c.c.Info()) != `{"name":"Ann"}` || string(c.c.Meta()) != `{"tenant":"t1"}` {
		t.Fatalf("client user %q info %s meta %s", c.c.User(), c.c.Info(), c.c.Meta())
	}
	// The subscription's info from subs is its chan_info in presence; the
	// override turns presence off for one subscription.
	p := c.Call(`{"id":2,"presence":{"channel":"px:room"}}`)
	if got := jsonclient.Compact(t, p); !strings.Contains(got, `"chan_info":{"r":1}`) || !strings.Contains(got, `"conn_info":{"name":"Ann"}`) {
		t.Fatalf("presence with info from the connect result: %s", got)
	}
	if p := c.Call(`{"id":4,"presence":{"channel":"px:hidden"}}`); jsonclient.Compact(t, p["presence"]) != `{"presence":{}}` {
		t.Fatalf("presence override from subs not applied: %v", p)
	}
	// Meta goes with later calls (include_connection_meta).
	b.answer("/rpc", `{"result":{}}`)
	c.Call(`{"id":3,"rpc":{"method":"m"}}`)
	if r := b.next(); jsonclient.Compact(t, r.body["meta"]) != `{"tenant":"t1"}` || r.body["user"] != "u1" {
		t.Fatalf("rpc request without the connection's meta: %v", r.body)
	}
}

// TestConnectWithTokenSkipsProxy: as in Centrifugo, a client that sends a
// token is authenticated by it and the backend is not asked.
func TestConnectWithTokenSkipsProxy(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startNode(t, fullConfig(b, nil))
	tok, err := signer(t).ConnectToken(auth.ConnectClaims{User: "jwt-user"})
	if err != nil {
		t.Fatal(err)
	}
	c := n.dial(nil)
	if m := c.Call(`{"id":1,"connect":{"token":"` + tok + `"}}`); m["connect"] == nil {
		t.Fatalf("token connect: %v", m)
	}
	if c.c.User() != "jwt-user" {
		t.Fatalf("user %q", c.c.User())
	}
	b.noCall()
}

// TestConnectRefusals: the backend's error is the client's error and the
// client is not connected; its disconnect closes the connection.
func TestConnectRefusals(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startNode(t, fullConfig(b, nil))
	c := n.dial(nil)
	b.answer("/connect", `{"error":{"code":1000,"message":"who are you","temporary":true}}`)
	m := c.Call(`{"id":1,"connect":{}}`)
	b.next()
	if jsonclient.Compact(t, m["error"]) != `{"code":1000,"message":"who are you","temporary":true}` {
		t.Fatalf("error from the backend: %v", m)
	}
	if c.c.User() != "" || n.hub.NumClients() != 0 {
		t.Fatalf("a refused connect left the client connected")
	}
	// The refused connection stays unusable, as after any refused connect.
	c.Send(`{"id":2,"subscribe":{"channel":"plain:x"}}`)
	c.ExpectClose(3501, "")
	b.noCall()

	c2 := n.dial(nil)
	b.answer("/connect", `{"disconnect":{"code":4501,"reason":"banned"}}`)
	c2.Send(`{"id":1,"connect":{}}`)
	b.next()
	c2.ExpectClose(4501, "")
}
