package proxy_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/proxy"
)

// TestMapPublishAndRemove: a map namespace with map publish and remove
// proxies asks the backend instead of its map permissions (which allow
// nothing here); the backend may replace the key and the data, refuse,
// and a result field Herald does not implement (score, stream_data) fails
// the command.
func TestMapPublishAndRemove(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startMapNode(t, b.url("/map_publish"), b.url("/map_remove"))
	h := n.hub
	c := n.dial(nil)
	c.Connect("u1")

	b.answer("/map_publish", `{"result":{"key":"u1:pos","data":{"x":2}}}`)
	if m := c.Call(`{"id":2,"publish":{"channel":"board:a","type":1,"key":"pos","data":{"x":1}}}`); m["publish"] == nil {
		t.Fatalf("map publish: %v", m)
	}
	req := b.next()
	if req.body["channel"] != "board:a" || req.body["key"] != "pos" || req.body["user"] != "u1" || jsonclient.Compact(t, req.body["data"]) != `{"x":1}` {
		t.Fatalf("map publish request: %v", req.body)
	}
	page, err := h.MapState(t.Context(), "board:a", "", 0)
	if err != nil || len(page.Entries) != 1 || page.Entries[0].Key != "u1:pos" || string(page.Entries[0].Data) != `{"x":2}` {
		t.Fatalf("state after the proxy's rewrite: %+v, %v", page.Entries, err)
	}

	b.answer("/map_remove", `{"result":{"key":"u1:pos"}}`)
	if m := c.Call(`{"id":3,"publish":{"channel":"board:a","type":1,"key":"pos","removed":true}}`); m["publish"] == nil {
		t.Fatalf("map remove: %v", m)
	}
	if req := b.next(); req.path != "/map_remove" || req.body["key"] != "pos" {
		t.Fatalf("map remove request: %s %v", req.path, req.body)
	}
	if st, err := h.MapStats(t.Context(), "board:a"); err != nil || st.NumKeys != 0 {
		t.Fatalf("keys after the remove: %+v, %v", st, err)
	}

	b.answer("/map_publish", `{"error":{"code":1001,"message":"not yours"}}`)
	jsonclient.WantError(t, c.Call(`{"id":4,"publish":{"channel":"board:a","type":1,"key":"k","data":{}}}`), 1001)
	b.next()
	b.answer("/map_publish", `{"result":{"score":10}}`)
	jsonclient.WantError(t, c.Call(`{"id":5,"publish":{"channel":"board:a","type":1,"key":"k","data":{}}}`), 100)
	b.next()
	// A namespace without the proxy keeps its map permissions (none).
	jsonclient.WantError(t, c.Call(`{"id":6,"publish":{"channel":"other:a","type":1,"key":"k","data":{}}}`), 103)
	b.noCall()
}

// TestMapPublishResultDelta: a map publish proxy's result with delta
// sends the change as a Fossil delta to a subscriber that negotiated
// delta, though the namespace lacks delta_publish, as Centrifugo 6.9.1
// takes it (internal/proxy/map_publish_handler.go); a result without it
// goes in full.
func TestMapPublishResultDelta(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startMapNode(t, b.url("/map_publish"), b.url("/map_remove"))
	sub := n.dial(nil)
	sub.Connect("u2")
	state := sub.Call(`{"id":2,"subscribe":{"channel":"board:a","type":1,"phase":2,"limit":10,"delta":"fossil"}}`)
	epoch, _ := jsonclient.Path(state, "subscribe", "epoch").(string)
	if live := sub.Call(fmt.Sprintf(`{"id":3,"subscribe":{"channel":"board:a","type":1,"phase":1,"delta":"fossil","epoch":%q}}`, epoch)); jsonclient.Path(live, "subscribe", "delta") != true {
		t.Fatalf("live reply without delta: %v (state %v)", live, state)
	}
	c := n.dial(nil)
	c.Connect("u1")
	pad := strings.Repeat("unchanged ", 30)
	for i, result := range []string{`{"delta":true}`, `{"delta":true}`, `{}`} {
		b.answer("/map_publish", `{"result":`+result+`}`)
		if m := c.Call(fmt.Sprintf(`{"id":%d,"publish":{"channel":"board:a","type":1,"key":"k","data":{"v":%d,"pad":%q}}}`, i+2, i, pad)); m["publish"] == nil {
			t.Fatalf("map publish %d: %v", i, m)
		}
		b.next()
		pub, _ := jsonclient.Path(sub.Next(), "push", "pub").(map[string]any)
		// The first change has no base to diff against.
		if (pub["delta"] == true) != (i == 1) {
			t.Fatalf("change %d with result %s: %.200v", i, result, pub)
		}
	}
}

// startMapNode starts a node whose map namespace "board" sends map
// publishes to the endpoint at publishURL and removes to removeURL, and
// whose map namespace "other" has no proxy (and allows clients nothing).
func startMapNode(t *testing.T, publishURL, removeURL string) *node {
	t.Helper()
	mapNS := hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionMap, Map: hub.MapOptions{Mode: hub.MapPersistent},
		AllowedDeltaTypes: []string{hub.DeltaFossil}}
	return startNodeWith(t, proxy.Config{
		Endpoints: []proxy.Endpoint{
			{Name: "mp", URL: publishURL, Timeout: 2 * time.Second},
			{Name: "mr", URL: removeURL, Timeout: 2 * time.Second},
		},
		MapPublish: map[string]string{"board": "mp"},
		MapRemove:  map[string]string{"board": "mr"},
	}, hub.ChannelConfig{Namespaces: []hub.Namespace{{Name: "board", NamespaceOptions: mapNS}, {Name: "other", NamespaceOptions: mapNS}}})
}

// TestMapPublishResultApplied: the map publish proxy's tags, key_mode,
// version, version_epoch, idempotency_key and delta, and the map remove
// proxy's tags and idempotency_key, go with the change as Centrifugo
// applies them; a change they leave undone is answered to the client as
// done, as Centrifugo answers a suppressed one.
func TestMapPublishResultApplied(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startMapNode(t, b.url("/map_publish"), b.url("/map_remove"))
	h := n.hub
	c := n.dial(nil)
	c.Connect("u1")
	publish := func(id int, result string) {
		t.Helper()
		b.answer("/map_publish", `{"result":`+result+`}`)
		if m := c.Call(fmt.Sprintf(`{"id":%d,"publish":{"channel":"board:a","type":1,"key":"k","data":{"v":%d}}}`, id, id)); m["publish"] == nil {
			t.Fatalf("map publish %d with %s: %v", id, result, m)
		}
		b.next()
	}
	state := func() string {
		t.Helper()
		page, err := h.MapState(t.Context(), "board:a", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range page.Entries {
			out = append(out, fmt.Sprintf("%s=%s%v@%d", p.Key, p.Data, p.Tags, p.Offset))
		}
		return strings.Join(out, " ")
	}
	publish(1, `{"tags":{"team":"red"},"key_mode":"if_new","version":5,"version_epoch":"e","delta":true}`)
	publish(2, `{"key_mode":"if_new"}`)             // the key exists: suppressed
	publish(3, `{"version":5,"version_epoch":"e"}`) // not above 5: suppressed
	publish(4, `{"key":"j","idempotency_key":"once"}`)
	publish(5, `{"key":"j","idempotency_key":"once"}`) // a repeat: suppressed
	if got, want := state(), `j={"v":4}map[]@2 k={"v":1}map[team:red]@1`; got != want {
		t.Fatalf("state %s, want %s", got, want)
	}
	b.answer("/map_remove", `{"result":{"key":"j","tags":{"team":"blue"},"idempotency_key":"gone"}}`)
	if m := c.Call(`{"id":6,"publish":{"channel":"board:a","type":1,"key":"j","removed":true}}`); m["publish"] == nil {
		t.Fatalf("map remove: %v", m)
	}
	b.next()
	pubs, _, err := h.MapStream(t.Context(), "board:a", nil, -1, false)
	if err != nil || len(pubs) != 3 || !pubs[2].Removed || pubs[2].Tags["team"] != "blue" {
		t.Fatalf("stream: %+v, %v; want the removal of j with its tags third", pubs, err)
	}
	b.answer("/map_publish", `{"result":{"key_mode":"sometimes"}}`)
	jsonclient.WantError(t, c.Call(`{"id":7,"publish":{"channel":"board:a","type":1,"key":"k","data":{}}}`), 107)
	b.next()
}
