package proxy_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/proxy"
)

// connected returns a client connected as user u1 through the proxy.
func connected(t *testing.T, n *node, b *backend) *client {
	t.Helper()
	c := n.dial(nil)
	c.connectOK(b, `{"user":"u1"}`)
	return c
}

// TestSubscribe: the namespace's proxy decides, with info, data, expiry
// and overrides; a token, or a namespace without proxy, leaves it to the
// hub.
func TestSubscribe(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startNode(t, fullConfig(b, nil))
	c := connected(t, n, b)

	b.answer("/subscribe", `{"result":{"info":{"role":"r"},"data":{"hi":1},"expire_at":`+in(10*time.Minute)+`}}`)
	m := c.Call(`{"id":2,"subscribe":{"channel":"px:a","data":{"q":1}}}`)
	req := b.next()
	if req.path != "/subscribe" || req.body["channel"] != "px:a" || req.body["user"] != "u1" || req.body["client"] != c.c.ID() ||
		jsonclient.Compact(t, req.body["data"]) != `{"q":1}` || req.body["meta"] != nil {
		t.Fatalf("subscribe request: %s %v", req.path, req.body)
	}
	// The expiry is renewed server-side through sub_refresh: not told.
	res, ok := m["subscribe"].(map[string]any)
	if !ok || jsonclient.Compact(t, res["data"]) != `{"hi":1}` || res["expires"] != nil {
		t.Fatalf("subscribe result: %v", m)
	}
	if p := c.Call(`{"id":3,"presence":{"channel":"px:a"}}`); !strings.Contains(jsonclient.Compact(t, p), `"chan_info":{"role":"r"}`) {
		t.Fatalf("info from the subscribe proxy: %v", p)
	}

	// An override turns positioning on (the channels without namespace
	// keep history).
	b.answer("/subscribe", `{"result":{"override":{"force_positioning":{"value":true}}}}`)
	m = c.Call(`{"id":4,"subscribe":{"channel":"room"}}`)
	b.next()
	if res, _ := m["subscribe"].(map[string]any); res == nil || res["positioned"] != true {
		t.Fatalf("override from the subscribe proxy: %v", m)
	}

	b.answer("/subscribe", `{"error":{"code":403,"message":"nope"}}`)
	m = c.Call(`{"id":5,"subscribe":{"channel":"px:secret"}}`)
	b.next()
	if jsonclient.Compact(t, m["error"]) != `{"code":403,"message":"nope"}` {
		t.Fatalf("refusal from the subscribe proxy: %v", m)
	}

	// No proxy for namespace plain: its options allow clients.
	if m := c.Call(`{"id":6,"subscribe":{"channel":"plain:x"}}`); m["subscribe"] == nil {
		t.Fatalf("subscribe without proxy: %v", m)
	}
	// A subscription token is checked as a JWT.
	tok, err := signer(t).SubscribeToken(auth.SubscribeClaims{User: "u1", Channel: "px:tok"})
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Call(`{"id":7,"subscribe":{"channel":"px:tok","token":"` + tok + `"}}`); m["subscribe"] == nil {
		t.Fatalf("subscribe with token: %v", m)
	}
	b.noCall()

	b.answer("/subscribe", `{"disconnect":{"code":4502,"reason":"go"}}`)
	c.Send(`{"id":8,"subscribe":{"channel":"px:bye"}}`)
	b.next()
	c.ExpectClose(4502, "")
}

// TestPublish: the publish proxy may rewrite the data, skip history or
// refuse; without proxy the namespace's permission applies.
func TestPublish(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startNode(t, fullConfig(b, nil))
	c := connected(t, n, b)
	b.answer("/subscribe", `{"result":{}}`)
	c.Call(`{"id":2,"subscribe":{"channel":"room"}}`)
	b.next()

	b.answer("/publish", `{"result":{"data":{"text":"HI","by":"u1"}}}`)
	m := c.Call(`{"id":3,"publish":{"channel":"room","data":{"text":"hi"}}}`)
	req := b.next()
	if req.path != "/publish" || req.body["channel"] != "room" || req.body["user"] != "u1" || jsonclient.Compact(t, req.body["data"]) != `{"text":"hi"}` {
		t.Fatalf("publish request: %s %v", req.path, req.body)
	}
	if m["publish"] == nil {
		t.Fatalf("publish: %v", m)
	}
	h := c.Call(`{"id":4,"history":{"channel":"room","limit":10}}`)
	if !strings.Contains(jsonclient.Compact(t, h), `"data":{"by":"u1","text":"HI"}`) {
		t.Fatalf("rewritten publication not in history: %v", h)
	}

	b.answer("/publish", `{"result":{"skip_history":true}}`)
	c.Call(`{"id":5,"publish":{"channel":"room","data":{"text":"ephemeral"}}}`)
	b.next()
	if h := c.Call(`{"id":6,"history":{"channel":"room","limit":10}}`); strings.Contains(jsonclient.Compact(t, h), "ephemeral") {
		t.Fatalf("skip_history ignored: %v", h)
	}

	b.answer("/publish", `{"error":{"code":1001,"message":"spam"}}`)
	jsonclient.WantError(t, c.Call(`{"id":7,"publish":{"channel":"room","data":{"text":"buy"}}}`), 1001)
	b.next()

	// Namespace plain has no publish proxy and allows no publishing.
	jsonclient.WantError(t, c.Call(`{"id":8,"publish":{"channel":"plain:x","data":{}}}`), 103)
	b.noCall()
}

// TestSubRefresh: a subscription the subscribe proxy allowed with an
// expiry is renewed through the sub_refresh proxy when it expires; a
// sub_refresh command without token goes there too; expired unsubscribes.
func TestSubRefresh(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startNode(t, fullConfig(b, nil))
	c := connected(t, n, b)
	b.answer("/subscribe", `{"result":{"expire_at":`+in(time.Second)+`}}`)
	b.answer("/sub_refresh", `{"result":{"expire_at":`+in(time.Hour)+`,"info":{"v":2}}}`)
	c.Call(`{"id":2,"subscribe":{"channel":"px:s"}}`)
	b.next()
	req := b.next() // at expiry, without any command from the client
	if req.path != "/sub_refresh" || req.body["channel"] != "px:s" || req.body["user"] != "u1" {
		t.Fatalf("sub_refresh request: %s %v", req.path, req.body)
	}
	// The new info goes with the client's publications.
	b.answer("/publish", `{"result":{}}`)
	c.Send(`{"id":4,"publish":{"channel":"px:s","data":{}}}`)
	b.next()
	for {
		m := c.Next()
		if p, ok := m["push"].(map[string]any); ok && p["pub"] != nil {
			if got := jsonclient.Compact(t, p["pub"]); !strings.Contains(got, `"chan_info":{"v":2}`) {
				t.Fatalf("info from sub_refresh not in the publication: %s", got)
			}
			break
		}
	}

	b.answer("/sub_refresh", `{"result":{"expire_at":`+in(2*time.Hour)+`}}`)
	m := c.Call(`{"id":5,"sub_refresh":{"channel":"px:s"}}`)
	b.next()
	// Renewed, and still the hub's to renew: no expiry for the client.
	if res, _ := m["sub_refresh"].(map[string]any); res == nil || res["expires"] != nil {
		t.Fatalf("sub_refresh result: %v", m)
	}

	b.answer("/sub_refresh", `{"result":{"expired":true}}`)
	c.Send(`{"id":6,"sub_refresh":{"channel":"px:s"}}`)
	b.next()
	for {
		m := c.Next()
		if u, ok := m["push"].(map[string]any); ok && u["channel"] == "px:s" && u["unsubscribe"] != nil {
			if code := u["unsubscribe"].(map[string]any)["code"]; code != float64(2501) {
				t.Fatalf("unsubscribe code %v, want 2501", code)
			}
			break
		}
	}
}

// TestRefresh: a connection the connect proxy authenticated is renewed
// by the refresh proxy when it expires (server-side, the client is told
// no expiry); a refresh command without token also goes to the proxy.
func TestRefresh(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startNode(t, fullConfig(b, func(e *proxy.Endpoint) { e.IncludeConnectionMeta = true }))
	c := n.dial(nil)
	b.answer("/refresh", `{"result":{"expire_at":`+in(time.Hour)+`,"info":{"fresh":true}}}`)
	res := c.connectOK(b, `{"user":"u1","expire_at":`+in(time.Second)+`,"meta":{"m":1}}`)
	if res["expires"] != nil {
		t.Fatalf("connect result tells the client to refresh itself: %v", res)
	}
	req := b.next() // at expiry, without any command from the client
	if req.path != "/refresh" || req.body["user"] != "u1" || req.body["client"] != c.c.ID() || jsonclient.Compact(t, req.body["meta"]) != `{"m":1}` {
		t.Fatalf("refresh request: %s %v", req.path, req.body)
	}
	// Commands run after the refresh on the client's goroutine.
	b.answer("/rpc", `{"result":{}}`)
	c.Call(`{"id":2,"rpc":{"method":"m"}}`)
	b.next()
	if string(c.c.Info()) != `{"fresh":true}` {
		t.Fatalf("info from refresh: %s", c.c.Info())
	}

	b.answer("/refresh", `{"result":{"expire_at":`+in(2*time.Hour)+`}}`)
	m := c.Call(`{"id":3,"refresh":{}}`)
	b.next()
	// A server-side refreshed connection is not told an expiry; as the
	// reference, the reply carries expires and ttl only.
	if res, _ := m["refresh"].(map[string]any); res == nil || res["expires"] != nil || res["client"] != nil {
		t.Fatalf("refresh result: %v", m)
	}
	b.answer("/refresh", `{"result":{"expired":true}}`)
	c.Send(`{"id":4,"refresh":{}}`)
	b.next()
	c.ExpectClose(3005, "")

	// The backend says expired at the connection's expiry: closed.
	c2 := n.dial(nil)
	c2.connectOK(b, `{"user":"u2","expire_at":`+in(time.Second)+`}`)
	b.next()
	c2.ExpectClose(3005, "")
}

// TestRPC: methods go to the proxy of their namespace; an undeclared
// namespace is 104, a namespace without proxy 108.
func TestRPC(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startNode(t, fullConfig(b, nil))
	c := connected(t, n, b)

	b.answer("/rpc", `{"result":{"data":{"name":"Ann"}}}`)
	m := c.Call(`{"id":2,"rpc":{"method":"getUser","data":{"id":7}}}`)
	req := b.next()
	if req.path != "/rpc" || req.body["method"] != "getUser" || jsonclient.Compact(t, req.body["data"]) != `{"id":7}` || req.body["user"] != "u1" {
		t.Fatalf("rpc request: %s %v", req.path, req.body)
	}
	if jsonclient.Compact(t, m["rpc"]) != `{"data":{"name":"Ann"}}` {
		t.Fatalf("rpc result: %v", m)
	}
	b.answer("/rpc_ns", `{"result":{"data":[1,2]}}`)
	if m := c.Call(`{"id":3,"rpc":{"method":"ns:list"}}`); jsonclient.Compact(t, m["rpc"]) != `{"data":[1,2]}` {
		t.Fatalf("rpc in namespace: %v", m)
	}
	if r := b.next(); r.path != "/rpc_ns" || r.body["method"] != "ns:list" {
		t.Fatalf("namespaced rpc request: %s %v", r.path, r.body)
	}
	jsonclient.WantError(t, c.Call(`{"id":4,"rpc":{"method":"off:x"}}`), 108)
	jsonclient.WantError(t, c.Call(`{"id":5,"rpc":{"method":"nowhere:x"}}`), 104)
	b.noCall()
	b.answer("/rpc", `{"error":{"code":404,"message":"no such user"}}`)
	if m := c.Call(`{"id":6,"rpc":{"method":"getUser"}}`); jsonclient.Compact(t, m["error"]) != `{"code":404,"message":"no such user"}` {
		t.Fatalf("rpc error: %v", m)
	}
	b.next()
}

// TestRPCNamespaceBoundary: with another rpc.namespace_boundary the
// namespace ends there, and ':' is part of a method's name.
func TestRPCNamespaceBoundary(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	cfg := fullConfig(b, nil)
	cfg.RPCNamespaceBoundary = "."
	n := startNode(t, cfg)
	c := connected(t, n, b)
	b.answer("/rpc_ns", `{"result":{"data":1}}`)
	if m := c.Call(`{"id":2,"rpc":{"method":"ns.list"}}`); jsonclient.Compact(t, m["rpc"]) != `{"data":1}` {
		t.Fatalf("rpc in namespace: %v", m)
	}
	if r := b.next(); r.path != "/rpc_ns" || r.body["method"] != "ns.list" {
		t.Fatalf("namespaced rpc request: %s %v", r.path, r.body)
	}
	b.answer("/rpc", `{"result":{"data":2}}`)
	if m := c.Call(`{"id":3,"rpc":{"method":"nowhere:x"}}`); jsonclient.Compact(t, m["rpc"]) != `{"data":2}` {
		t.Fatalf("method with ':' and no '.': want the proxy without namespace, got %v", m)
	}
	b.next()
}

// TestBinaryEncoding: with binary_encoding, payloads go as b64data and
// the backend's b64 fields are decoded.
func TestBinaryEncoding(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startNode(t, fullConfig(b, func(e *proxy.Endpoint) { e.BinaryEncoding = true }))
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	c := n.dial(nil)
	b.answer("/connect", `{"result":{"user":"u2","b64info":"`+b64(`{"i":1}`)+`","b64data":"`+b64(`{"d":1}`)+`"}}`)
	m := c.Call(`{"id":1,"connect":{"data":{"a":1}}}`)
	req := b.next()
	if req.body["encoding"] != "binary" || req.body["b64data"] != b64(`{"a":1}`) || req.body["data"] != nil {
		t.Fatalf("binary connect request: %v", req.body)
	}
	if res, _ := m["connect"].(map[string]any); res == nil || jsonclient.Compact(t, res["data"]) != `{"d":1}` || string(c.c.Info()) != `{"i":1}` {
		t.Fatalf("b64 connect result: %v, info %s", m, c.c.Info())
	}

	b.answer("/rpc", `{"result":{"b64data":"`+b64(`{"r":1}`)+`"}}`)
	if m := c.Call(`{"id":2,"rpc":{"method":"x","data":{"p":1}}}`); jsonclient.Compact(t, m["rpc"]) != `{"data":{"r":1}}` {
		t.Fatalf("b64 rpc result: %v", m)
	}
	if r := b.next(); r.body["b64data"] != b64(`{"p":1}`) {
		t.Fatalf("binary rpc request: %v", r.body)
	}

	b.answer("/subscribe", `{"result":{"b64data":"`+b64(`{"s":1}`)+`","b64info":"`+b64(`{"ci":1}`)+`"}}`)
	if m := c.Call(`{"id":3,"subscribe":{"channel":"room"}}`); jsonclient.Compact(t, m["subscribe"].(map[string]any)["data"]) != `{"s":1}` {
		t.Fatalf("b64 subscribe result: %v", m)
	}
	b.next()
	b.answer("/publish", `{"result":{"b64data":"`+b64(`{"rewritten":1}`)+`"}}`)
	c.Call(`{"id":4,"publish":{"channel":"room","data":{"x":1}}}`)
	if r := b.next(); r.body["b64data"] != b64(`{"x":1}`) {
		t.Fatalf("binary publish request: %v", r.body)
	}
	if h := c.Call(`{"id":5,"history":{"channel":"room","limit":10}}`); !strings.Contains(jsonclient.Compact(t, h), `{"rewritten":1}`) {
		t.Fatalf("b64 publish rewrite: %v", h)
	}
	b.answer("/sub_refresh", `{"result":{"expire_at":`+in(time.Hour)+`,"b64info":"`+b64(`{"sr":1}`)+`"}}`)
	if m := c.Call(`{"id":7,"sub_refresh":{"channel":"room"}}`); m["sub_refresh"] == nil {
		t.Fatalf("b64 sub_refresh: %v", m)
	}
	b.next()
	if p := c.Call(`{"id":8,"presence":{"channel":"room"}}`); !strings.Contains(jsonclient.Compact(t, p), `"conn_info":{"i":1}`) {
		t.Fatalf("presence: %v", p)
	}
	b.answer("/refresh", `{"result":{"b64info":"`+b64(`{"r":2}`)+`"}}`)
	c.Call(`{"id":9,"refresh":{}}`)
	b.next()
	if string(c.c.Info()) != `{"r":2}` {
		t.Fatalf("b64info from refresh: %s", c.c.Info())
	}

	// Server-side subscriptions with b64 options.
	c2 := n.dial(nil)
	b.answer("/connect", `{"result":{"user":"u3","subs":{"px:b":{"b64data":"`+b64(`{"sd":1}`)+`","b64info":"`+b64(`{"si":1}`)+`"}}}}`)
	m = c2.Call(`{"id":1,"connect":{}}`)
	b.next()
	if got := jsonclient.Compact(t, m["connect"].(map[string]any)["subs"]); !strings.Contains(got, `"px:b":{"data":{"sd":1}}`) {
		t.Fatalf("b64 subs in the connect result: %s", got)
	}
	if p := c2.Call(`{"id":2,"presence":{"channel":"px:b"}}`); !strings.Contains(jsonclient.Compact(t, p), `"chan_info":{"si":1}`) {
		t.Fatalf("b64info of subs: %v", p)
	}

	// A JSON client cannot carry bytes that are not JSON: the backend's
	// answer is unusable, error 100.
	b.answer("/rpc", `{"result":{"b64data":"`+b64("\x00\x01")+`"}}`)
	jsonclient.WantError(t, c.Call(`{"id":10,"rpc":{"method":"x"}}`), 100)
	b.next()
}
