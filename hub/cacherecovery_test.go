package hub_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// cacheNode has namespace cc (cache recovery when the client asks) and
// ac (auto_cache_recover: on every subscribe).
func cacheNode(t *testing.T) *node {
	cache := hub.NamespaceOptions{AllowSubscribeForClient: true, ForceRecovery: true, ForceRecoveryMode: hub.RecoveryCache,
		HistorySize: 1, HistoryTTL: time.Minute, AllowTagsFilter: true}
	auto := cache
	auto.AutoCacheRecover = true
	return startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{ns("cc", cache), ns("ac", auto)}}})
}

func onlyPubN(t *testing.T, v any) string {
	t.Helper()
	pubs, _ := v.([]any)
	var out []int64
	for _, p := range pubs {
		out = append(out, jsonclient.Num(jsonclient.Path(p.(map[string]any), "data", "n")))
	}
	return fmt.Sprint(out)
}

// TestCacheRecovery: a new subscriber that asks for recovery (since {} in
// centrifuge-js: recover without a position) gets the latest publication
// only; one that holds the top already gets none; live publications then
// follow once each.
func TestCacheRecovery(t *testing.T) {
	t.Parallel()
	n := cacheNode(t)
	sp := publishN(t, n.hub, "cc:a", 3)

	c := n.dial(t)
	c.Connect("u")
	res := c.MustSubscribe(2, "cc:a", `"recover":true`)
	if res["recovered"] != true || res["was_recovering"] != true || res["epoch"] != sp.Epoch || onlyPubN(t, res["publications"]) != "[3]" {
		t.Fatalf("subscribe result %v", res)
	}
	publishN(t, n.hub, "cc:a", 1)
	if p := jsonclient.PushesOf(c.Drain(), "cc:a", "pub"); len(p) != 1 || jsonclient.Num(p[0]["offset"]) != 4 {
		t.Fatalf("live after cache recovery: %v", p)
	}

	// Without asking: a plain subscription (the namespace does not recover
	// on its own).
	plain := n.dial(t)
	plain.Connect("u")
	if res := plain.MustSubscribe(2, "cc:a", ""); res["publications"] != nil || res["was_recovering"] == true {
		t.Fatalf("subscribe without recover: %v", res)
	}

	// At the top already: recovered, nothing to give.
	top := n.dial(t)
	top.Connect("u")
	if res := top.MustSubscribe(2, "cc:a", recoverReq(4, sp.Epoch)); res["recovered"] != true || res["publications"] != nil {
		t.Fatalf("subscribe at the top: %v", res)
	}

	// An empty channel: nothing to recover, recovered false.
	empty := n.dial(t)
	empty.Connect("u")
	if res := empty.MustSubscribe(2, "cc:empty", `"recover":true`); res["recovered"] == true || res["publications"] != nil {
		t.Fatalf("subscribe to an empty channel: %v", res)
	}
}

// TestCacheRecoveryFilter: with a tags filter, the latest publication
// that passes it.
func TestCacheRecoveryFilter(t *testing.T) {
	t.Parallel()
	n := cacheNode(t)
	// History keeps one publication, so only the newest can pass.
	publishTagged(t, n.hub, "cc:f", 1, map[string]string{"k": "a"})
	publishTagged(t, n.hub, "cc:f", 2, map[string]string{"k": "b"})
	c := n.dial(t)
	c.Connect("u")
	if res := c.MustSubscribe(2, "cc:f", `"recover":true,"tf":{"key":"k","cmp":"eq","val":"b"}`); onlyPubN(t, res["publications"]) != "[2]" {
		t.Fatalf("filter b: %v", res)
	}
	d := n.dial(t)
	d.Connect("u")
	if res := d.MustSubscribe(2, "cc:f", `"recover":true,"tf":{"key":"k","cmp":"eq","val":"a"}`); res["recovered"] != true || res["publications"] != nil {
		t.Fatalf("filter a (its publication no longer kept): %v", res)
	}
}

// TestAutoCacheRecover: the latest publication on every subscribe without
// the client asking, server-side subscriptions included.
func TestAutoCacheRecover(t *testing.T) {
	t.Parallel()
	n := cacheNode(t)
	publishN(t, n.hub, "ac:a", 2)
	c := n.dial(t)
	c.Connect("u")
	res := c.MustSubscribe(2, "ac:a", "")
	if res["recovered"] != true || res["was_recovering"] != true || onlyPubN(t, res["publications"]) != "[2]" {
		t.Fatalf("subscribe result %v", res)
	}

	s := n.dial(t)
	cres := s.ConnectToken(token(t, auth.ConnectClaims{User: "u", Channels: []string{"ac:a"}}))
	sub, _ := jsonclient.Path(cres, "subs", "ac:a").(map[string]any)
	if sub == nil || sub["recovered"] != true || onlyPubN(t, sub["publications"]) != "[2]" {
		t.Fatalf("server-side subscription: %v", cres)
	}
}

func TestRecoveryModeOptions(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		o     hub.NamespaceOptions
		field string
	}{
		"unknown mode":          {hub.NamespaceOptions{ForceRecoveryMode: "latest"}, "Namespaces[0].ForceRecoveryMode"},
		"auto without cache":    {hub.NamespaceOptions{AutoCacheRecover: true, ForceRecovery: true, HistorySize: 1, HistoryTTL: time.Minute}, "Namespaces[0].AutoCacheRecover"},
		"auto without recovery": {hub.NamespaceOptions{AutoCacheRecover: true, ForceRecoveryMode: hub.RecoveryCache}, "Namespaces[0].AutoCacheRecover"},
	} {
		err := hub.ChannelConfig{Namespaces: []hub.Namespace{ns("x1", c.o)}}.Validate()
		oes := hub.OptionErrors(err)
		if len(oes) != 1 || oes[0].Field != c.field {
			t.Errorf("%s: %v, want one error on %s", name, err, c.field)
		}
	}
}
