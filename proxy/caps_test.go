package proxy_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/proxy"
)

// TestProxyCaps: the connect proxy's caps, the subscribe proxy's allow and
// the refresh proxy's new caps reach the connection, over HTTP and in
// Centrifugo's JSON shape; caps the backend gets wrong refuse the connect.
func TestProxyCaps(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	closed := hub.NamespaceOptions{Presence: true, HistorySize: 10, HistoryTTL: time.Minute}
	n := startNodeWith(t, proxy.Config{
		Endpoints: b.endpoints(nil), Connect: "connect", Refresh: "refresh",
		Subscribe: map[string]string{"sp": "subscribe"},
	}, hub.ChannelConfig{
		WithoutNamespace: closed,
		Namespaces:       []hub.Namespace{{Name: "news", NamespaceOptions: closed}, {Name: "sp", NamespaceOptions: closed}},
	})
	code := func(m map[string]any) int64 {
		e, ok := m["error"].(map[string]any)
		if !ok {
			return 0
		}
		return jsonclient.Num(e["code"])
	}

	c := n.dial(nil)
	c.connectOK(b, `{"user":"u1","caps":[{"channels":["news:*"],"match":"wildcard","allow":["sub","hst"]},{"channels":["room"],"allow":["pub"]}]}`)
	if res := c.MustSubscribe(2, "news:a", `"recoverable":true`); res["recoverable"] != true {
		t.Fatalf("subscribe with caps from the connect proxy: %v", res)
	}
	if m := c.Call(`{"id":3,"history":{"channel":"news:a","limit":-1}}`); code(m) != 0 {
		t.Fatalf("history with hst: %v", m)
	}
	if m := c.Call(`{"id":4,"publish":{"channel":"room","data":{}}}`); code(m) != 0 {
		t.Fatalf("publish with pub: %v", m)
	}
	if m := c.Call(`{"id":5,"presence":{"channel":"news:a"}}`); code(m) != int64(protocol.ErrorPermissionDenied) {
		t.Fatalf("presence without prs: %v, want 103", m)
	}

	// The subscribe proxy's allow is the subscription's.
	b.answer("/subscribe", `{"result":{"allow":["prs","pub"]}}`)
	c.MustSubscribe(6, "sp:1", "")
	b.next()
	if m := c.Call(`{"id":7,"presence":{"channel":"sp:1"}}`); code(m) != 0 {
		t.Fatalf("presence with prs from the subscribe proxy: %v", m)
	}
	if m := c.Call(`{"id":8,"history":{"channel":"sp:1","limit":-1}}`); code(m) != int64(protocol.ErrorPermissionDenied) {
		t.Fatalf("history without hst: %v, want 103", m)
	}

	// New caps from the refresh proxy: news:a goes (2000), room stays.
	b.answer("/refresh", `{"result":{"expire_at":`+in(time.Hour)+`,"caps":[{"channels":["room"],"allow":["sub","pub"]}]}}`)
	if m := c.Call(`{"id":9,"refresh":{}}`); code(m) != 0 {
		t.Fatalf("refresh: %v", m)
	}
	b.next()
	found := false
	for _, m := range c.Drain() {
		push, _ := m["push"].(map[string]any)
		if _, ok := push["unsubscribe"]; ok && push["channel"] == "news:a" {
			found = true
		}
	}
	if !found {
		t.Fatal("no unsubscribe from news:a after the refresh proxy's caps dropped it")
	}
	c.MustSubscribe(10, "room", "")

	// Caps the backend got wrong: the connect is refused, not granted.
	d := n.dial(nil)
	b.answer("/connect", `{"result":{"user":"u2","caps":[{"channels":["x"],"allow":["everything"]}]}}`)
	if m := d.Call(`{"id":1,"connect":{}}`); m["connect"] != nil {
		t.Fatalf("connect with bad caps from the proxy: %v", m)
	}
}
