package proxy_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/heraldhq/herald/proxy"
)

// TestEmulatedHeaders: an endpoint with emulated_headers gets the headers
// of the client's connect command (ConnectRequest.headers, field 6, which
// centrifuge-js fills from its 'headers' option) that it lists, on connect
// and on every later call of the connection, as Centrifugo v6.9.1 sends
// them: static headers under emulated ones, emulated ones under the HTTP
// request's of http_headers. A header only in http_headers is not taken
// from the connect command; an endpoint without emulated_headers keeps
// Herald's older behaviour (the connect call alone fills http_headers
// from the connect command).
func TestEmulatedHeaders(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	cfg := fullConfig(b, func(e *proxy.Endpoint) {
		e.HTTPHeaders = []string{"Cookie", "authorization", "X-Only-Http"}
		if e.Name == "publish" {
			// Herald's own behaviour, beside endpoints that set emulated_headers.
			e.HTTPHeaders = append(e.HTTPHeaders, "x-token")
			return
		}
		e.EmulatedHeaders = []string{"Authorization", "x-token"}
		e.StaticHTTPHeaders = map[string]string{"X-Token": "static", "X-Static": "s"}
	})
	n := startNode(t, cfg)
	connectHeaders := `"headers":{"authorization":"Bearer emulated","x-token":"tok","x-only-http":"e","x-other":"o"}`

	// The HTTP request's Authorization wins over the emulated one.
	c := n.dial(http.Header{"Cookie": {"sid=abc"}, "Authorization": {"Bearer transport"}})
	b.answer("/connect", `{"result":{"user":"u1","expire_at":`+in(time.Hour)+`}}`)
	if m := c.Call(`{"id":1,"connect":{` + connectHeaders + `}}`); m["connect"] == nil {
		t.Fatalf("connect failed: %v", m)
	}
	want := map[string]string{"Cookie": "sid=abc", "Authorization": "Bearer transport", "X-Token": "tok", "X-Static": "s", "X-Only-Http": "", "X-Other": ""}
	checkHeaders(t, "connect", b.next(), want)

	// Later calls of the connection carry the kept emulated headers.
	b.answer("/rpc", `{"result":{}}`)
	c.Call(`{"id":2,"rpc":{"method":"m","data":{}}}`)
	checkHeaders(t, "rpc", b.next(), want)
	b.answer("/subscribe", `{"result":{}}`)
	c.Call(`{"id":3,"subscribe":{"channel":"px:room"}}`)
	checkHeaders(t, "subscribe", b.next(), want)

	// The endpoint without emulated_headers takes none of them after
	// connect, although its http_headers names X-Token.
	b.answer("/publish", `{"result":{}}`)
	c.Call(`{"id":4,"publish":{"channel":"px:room","data":{}}}`)
	checkHeaders(t, "publish", b.next(), map[string]string{"Cookie": "sid=abc", "Authorization": "Bearer transport", "X-Token": "", "X-Static": ""})

	// Without the HTTP header, the emulated Authorization is sent.
	c2 := n.dial(http.Header{})
	if m := c2.Call(`{"id":1,"connect":{` + connectHeaders + `}}`); m["connect"] == nil {
		t.Fatalf("connect failed: %v", m)
	}
	checkHeaders(t, "connect without Authorization", b.next(), map[string]string{"Authorization": "Bearer emulated", "X-Token": "tok", "Cookie": ""})
}

// checkHeaders checks the headers of a backend call: "" is absent.
func checkHeaders(t *testing.T, what string, req call, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := req.header.Get(k); got != v {
			t.Errorf("%s: header %s = %q, want %q", what, k, got, v)
		}
	}
}
