package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

const pollSecret = "poll-secret"

// pollBackend is a refresh handler over a table of keys, recording what
// it was asked.
type pollBackend struct {
	mu    sync.Mutex
	items map[string]hub.SharedPollRefreshItem
	epoch string
	asked chan []hub.SharedPollItem
}

func newPollBackend() *pollBackend {
	return &pollBackend{items: make(map[string]hub.SharedPollRefreshItem), asked: make(chan []hub.SharedPollItem, 1024)}
}

func (b *pollBackend) set(key, data string, version uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.items[key] = hub.SharedPollRefreshItem{Key: key, Data: []byte(data), Version: version}
}

func (b *pollBackend) refresh(_ context.Context, ev hub.SharedPollRefreshEvent) (hub.SharedPollRefreshReply, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out hub.SharedPollRefreshReply
	out.Epoch = b.epoch
	for _, it := range ev.Items {
		if v, ok := b.items[it.Key]; ok {
			out.Items = append(out.Items, v)
		}
	}
	select {
	case b.asked <- ev.Items:
	default:
	}
	return out, nil
}

// pollNode has the shared poll namespaces pv (versioned, publish enabled)
// and pl (versionless), polled every interval.
func pollNode(t *testing.T, b *pollBackend, interval time.Duration) *node {
	return startNode(t, hub.Config{
		SharedPoll: hub.SharedPollConfig{HMACSecretKey: pollSecret},
		Handlers:   hub.Handlers{OnSharedPollRefresh: b.refresh},
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("pv", hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionSharedPoll,
				SharedPoll: hub.SharedPollOptions{Mode: hub.SharedPollVersioned, RefreshInterval: interval, MaxKeysPerConnection: 3, PublishEnabled: true}}),
			ns("pl", hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionSharedPoll,
				SharedPoll: hub.SharedPollOptions{RefreshInterval: interval}}),
		}},
	})
}

func trackCmd(id int, ch, user string, exp int64, keys ...string) string {
	items := make([]map[string]any, len(keys))
	for i, k := range keys {
		items[i] = map[string]any{"key": k}
	}
	sig := hub.SignTrack(pollSecret, ch, user, keys, time.Now().Unix(), exp)
	b, _ := json.Marshal(map[string]any{"id": id, "sub_refresh": map[string]any{
		"channel": ch, "type": 1, "track": []any{map[string]any{"signature": sig, "items": items}},
	}})
	return string(b)
}

// nextPub waits for the next publication push and returns it.
func nextPub(t *testing.T, c *rawClient) map[string]any {
	t.Helper()
	m := c.Next()
	pub, ok := m["push"].(map[string]any)["pub"].(map[string]any)
	if !ok {
		t.Fatalf("want a publication push, got %v", m)
	}
	return pub
}

func TestSharedPollTrackUpdateUntrack(t *testing.T) {
	b := newPollBackend()
	b.set("k1", `{"v":1}`, 1)
	n := pollNode(t, b, 50*time.Millisecond)
	c := n.dial(t)
	c.Connect("u1")
	res := c.MustSubscribe(2, "pv:a", `"type":4`)
	if jsonclient.Num(res["type"]) != 4 {
		t.Fatalf("subscribe result type: %v", res)
	}

	rep := c.Call(trackCmd(3, "pv:a", "u1", time.Now().Add(time.Hour).Unix(), "k1", "k2"))
	r, ok := rep["sub_refresh"].(map[string]any)
	if !ok || r["expires"] != true {
		t.Fatalf("track reply: %v", rep)
	}
	pub := nextPub(t, c)
	if pub["key"] != "k1" || jsonclient.Num(pub["version"]) != 1 || fmt.Sprint(pub["data"]) != "map[v:1]" {
		t.Fatalf("first push: %v", pub)
	}

	// A newer version is pushed; an equal one is not.
	b.set("k2", `"two"`, 5)
	if pub := nextPub(t, c); pub["key"] != "k2" || jsonclient.Num(pub["version"]) != 5 {
		t.Fatalf("k2 push: %v", pub)
	}

	// A second client gets the data the node holds in its track reply.
	c2 := n.dial(t)
	c2.Connect("u2")
	c2.MustSubscribe(2, "pv:a", `"type":4`)
	rep = c2.Call(trackCmd(3, "pv:a", "u2", 0, "k1"))
	items, _ := rep["sub_refresh"].(map[string]any)["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["key"] != "k1" {
		t.Fatalf("second track reply: %v", rep)
	}

	// Each poll asks a key once, however many connections track it.
	for i := 0; i < 3; i++ {
		seen := map[string]int{}
		for _, it := range recv(t, b.asked, "a poll") {
			seen[it.Key]++
		}
		for k, nk := range seen {
			if nk > 1 {
				t.Fatalf("key %s asked %d times in one poll", k, nk)
			}
		}
	}

	// Untracked by c: c gets no more of k1, c2 does.
	rep = c.Call(`{"id":4,"sub_refresh":{"channel":"pv:a","type":2,"untrack":["k1"]}}`)
	if _, ok := rep["sub_refresh"]; !ok {
		t.Fatalf("untrack reply: %v", rep)
	}
	b.set("k1", `{"v":2}`, 2)
	if pub := nextPub(t, c2); pub["key"] != "k1" || jsonclient.Num(pub["version"]) != 2 {
		t.Fatalf("c2 push: %v", pub)
	}
	for _, m := range c.Drain() {
		t.Fatalf("untracked client got %v", m)
	}

	// The server API pushes a new version at once.
	if err := n.hub.SharedPollPublish(context.Background(), "pv:a", "k2", []byte(`"pushed"`), 9, ""); err != nil {
		t.Fatal(err)
	}
	if pub := nextPub(t, c); pub["key"] != "k2" || jsonclient.Num(pub["version"]) != 9 || pub["data"] != "pushed" {
		t.Fatalf("published push: %v", pub)
	}
}

func TestSharedPollRefusals(t *testing.T) {
	b := newPollBackend()
	n := pollNode(t, b, time.Hour)
	c := n.dial(t)
	c.Connect("u1")
	if m := c.Subscribe(2, "pv:a", ""); jsonclient.Num(m["error"].(map[string]any)["code"]) != 107 {
		t.Fatalf("stream subscribe to a shared poll channel: %v", m)
	}
	c.MustSubscribe(3, "pv:a", `"type":4`)
	errCode := func(m map[string]any) int64 {
		e, _ := m["error"].(map[string]any)
		return jsonclient.Num(e["code"])
	}
	// Signed for another user, another channel, another key set.
	bad := []string{
		trackCmd(4, "pv:a", "u2", 0, "k1"),
		trackCmd(5, "pv:b", "u1", 0, "k1"),
	}
	for _, cmd := range bad {
		if m := c.Call(cmd); errCode(m) != 103 {
			t.Fatalf("%s: %v", cmd, m)
		}
	}
	// Expired beyond the 5 s grace.
	if m := c.Call(trackCmd(6, "pv:a", "u1", time.Now().Add(-10*time.Second).Unix(), "k1")); errCode(m) != 109 {
		t.Fatalf("expired: %v", m)
	}
	// More than max_keys_per_connection (3).
	if m := c.Call(trackCmd(7, "pv:a", "u1", 0, "a", "b", "c", "d")); errCode(m) != 106 {
		t.Fatalf("limit: %v", m)
	}
	// The API needs publish_enabled.
	if err := n.hub.SharedPollPublish(context.Background(), "pl:a", "k", nil, 1, ""); err == nil {
		t.Fatal("publish to a namespace without publish_enabled")
	}
}

func TestSharedPollVersionlessAndRelease(t *testing.T) {
	b := newPollBackend()
	b.set("k", `1`, 0)
	n := pollNode(t, b, 30*time.Millisecond)
	c := n.dial(t)
	c.Connect("u1")
	res := c.MustSubscribe(2, "pl:a", `"type":4`)
	if res["epoch"] == "" || res["epoch"] == nil {
		t.Fatalf("versionless subscribe has no epoch: %v", res)
	}
	c.Call(trackCmd(3, "pl:a", "u1", 0, "k"))
	p1 := nextPub(t, c)
	b.set("k", `2`, 0)
	p2 := nextPub(t, c)
	if jsonclient.Num(p2["version"]) <= jsonclient.Num(p1["version"]) || jsonclient.Num(p2["data"]) != 2 {
		t.Fatalf("versionless change: %v then %v", p1, p2)
	}
	if got := hub.SharedPollChannels(n.hub); got != 1 {
		t.Fatalf("%d shared poll channels, want 1", got)
	}
	c.Call(`{"id":4,"unsubscribe":{"channel":"pl:a"}}`)
	if got := hub.SharedPollChannels(n.hub); got != 0 {
		t.Fatalf("%d shared poll channels after unsubscribe, want 0", got)
	}
}

func TestSharedPollConfigRefused(t *testing.T) {
	spNS := hub.ChannelConfig{Namespaces: []hub.Namespace{ns("pv", hub.NamespaceOptions{SubscriptionType: hub.SubscriptionSharedPoll})}}
	for name, cfg := range map[string]hub.Config{
		"no key":     {Channels: spNS, Handlers: hub.Handlers{OnSharedPollRefresh: newPollBackend().refresh}},
		"no handler": {Channels: spNS, SharedPoll: hub.SharedPollConfig{HMACSecretKey: pollSecret}},
		"bad mode": {Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{ns("pv", hub.NamespaceOptions{SubscriptionType: hub.SubscriptionSharedPoll,
			SharedPoll: hub.SharedPollOptions{Mode: "sometimes"}})}},
			SharedPoll: hub.SharedPollConfig{HMACSecretKey: pollSecret}, Handlers: hub.Handlers{OnSharedPollRefresh: newPollBackend().refresh}},
	} {
		if _, err := hub.New(withTestDefaults(t, cfg)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
