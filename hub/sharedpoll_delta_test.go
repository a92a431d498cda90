package hub_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// TestSharedPollDelta: a shared poll subscriber that negotiated Fossil
// gets each key's first data in full (a JSON string over JSON, in a push
// or in its track reply) and the next versions as deltas against the one
// it holds; a subscriber without delta gets the data as it is.
func TestSharedPollDelta(t *testing.T) {
	b := newPollBackend()
	b.set("k", string(deltaDoc(1)), 1)
	n := startNode(t, hub.Config{
		SharedPoll: hub.SharedPollConfig{HMACSecretKey: pollSecret},
		Handlers:   hub.Handlers{OnSharedPollRefresh: b.refresh},
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("pd", hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionSharedPoll,
				AllowedDeltaTypes: []string{hub.DeltaFossil},
				SharedPoll:        hub.SharedPollOptions{Mode: hub.SharedPollVersioned, RefreshInterval: 20 * time.Millisecond}}),
		}},
	})
	exp := time.Now().Add(time.Hour).Unix()
	c := n.dial(t)
	c.Connect("u1")
	if res := c.MustSubscribe(2, "pd:a", `"type":4,"delta":"fossil"`); res["delta"] != true {
		t.Fatalf("subscribe result without delta: %v", res)
	}
	plain := n.dial(t)
	plain.Connect("u3")
	if res := plain.MustSubscribe(2, "pd:a", `"type":4`); res["delta"] != nil {
		t.Fatalf("delta without asking: %v", res)
	}
	c.Call(trackCmd(3, "pd:a", "u1", exp, "k"))
	r := &deltaReader{t: t}
	if got := r.applyJSON(nextPub(t, c)); string(got) != string(deltaDoc(1)) || r.full != 1 {
		t.Fatalf("first push rebuilt as %s", got)
	}
	plain.Call(trackCmd(3, "pd:a", "u3", exp, "k"))

	b.set("k", string(deltaDoc(2)), 2)
	pub := nextPub(t, c)
	if raw, _ := pub["data"].(string); pub["delta"] != true || len(raw) > 200 {
		t.Fatalf("second version not a small delta: %v", pub)
	}
	if got := r.applyJSON(pub); string(got) != string(deltaDoc(2)) {
		t.Fatalf("second version rebuilt as %s", got)
	}

	// A later subscriber gets the data the node holds in its track reply,
	// as a JSON string, and a delta on the next version.
	c2 := n.dial(t)
	c2.Connect("u2")
	c2.MustSubscribe(2, "pd:a", `"type":4,"delta":"fossil"`)
	rep := c2.Call(trackCmd(3, "pd:a", "u2", exp, "k"))
	items, _ := rep["sub_refresh"].(map[string]any)["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("track reply: %v", rep)
	}
	r2 := &deltaReader{t: t}
	if got := r2.applyJSON(items[0]); string(got) != string(deltaDoc(2)) {
		t.Fatalf("track reply item rebuilt as %s", got)
	}

	b.set("k", string(deltaDoc(3)), 3)
	for i, x := range []struct {
		c *rawClient
		r *deltaReader
	}{{c, r}, {c2, r2}} {
		pub := nextPub(t, x.c)
		if got := x.r.applyJSON(pub); pub["delta"] != true || string(got) != string(deltaDoc(3)) {
			t.Fatalf("client %d: third version %v rebuilt as %s", i+1, pub["delta"], got)
		}
	}
	var seen []uint64
	for len(seen) < 2 {
		pub := nextPub(t, plain)
		if pub["delta"] != nil {
			t.Fatalf("plain subscriber got %v", pub)
		}
		if _, isObject := pub["data"].(map[string]any); !isObject {
			t.Fatalf("plain subscriber's data is not the JSON object: %v", pub["data"])
		}
		seen = append(seen, uint64(jsonclient.Num(pub["version"])))
	}
	if seen[0] != 2 || seen[1] != 3 {
		t.Fatalf("plain subscriber's versions: %v", seen)
	}
}
