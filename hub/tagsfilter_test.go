package hub_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// tagsNode has namespace tf (tags filter allowed, recoverable, delta
// allowed), nf (no tags filter) and cf (cache recovery with filters).
func tagsNode(t *testing.T) *node {
	return startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("tf", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowTagsFilter: true, ForceRecovery: true,
			HistorySize: 100, HistoryTTL: time.Minute, AllowedDeltaTypes: []string{hub.DeltaFossil}}),
		ns("nf", hub.NamespaceOptions{AllowSubscribeForClient: true}),
		ns("cf", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowTagsFilter: true, ForceRecovery: true,
			ForceRecoveryMode: hub.RecoveryCache, HistorySize: 10, HistoryTTL: time.Minute}),
	}}})
}

func publishTagged(t *testing.T, h *hub.Hub, ch string, n int, tags map[string]string) engine.StreamPosition {
	t.Helper()
	sp, err := h.Publish(context.Background(), ch, []byte(fmt.Sprintf(`{"n":%d}`, n)), hub.PublishOptions{Tags: tags})
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func pubNs(t *testing.T, pubs []map[string]any) []int64 {
	t.Helper()
	var out []int64
	for _, p := range pubs {
		out = append(out, jsonclient.Num(jsonclient.Path(p, "data", "n")))
	}
	return out
}

// TestTagsFilterDelivery: a filtered subscriber receives only the
// matching publications, an unfiltered one every publication, and the
// filtered one's stream position moves past those it does not receive,
// so that the next one is not taken for a gap.
func TestTagsFilterDelivery(t *testing.T) {
	t.Parallel()
	n := tagsNode(t)
	f := n.dial(t)
	f.Connect("u1")
	res := f.MustSubscribe(2, "tf:a", `"tf":{"key":"ticker","cmp":"eq","val":"BTC"}`)
	if res["recoverable"] != true {
		t.Fatalf("subscribe result %v", res)
	}
	same := n.dial(t) // the same filter: shares its evaluation
	same.Connect("u2")
	same.MustSubscribe(2, "tf:a", `"tf":{"key":"ticker","cmp":"eq","val":"BTC"}`)
	all := n.dial(t)
	all.Connect("u3")
	all.MustSubscribe(2, "tf:a", "")
	for i, tk := range []string{"BTC", "ETH", "ETH", "BTC", "", "BTC"} {
		var tags map[string]string
		if tk != "" {
			tags = map[string]string{"ticker": tk}
		}
		publishTagged(t, n.hub, "tf:a", i+1, tags)
	}
	for _, c := range []*rawClient{f, same} {
		msgs := c.Drain()
		if got := fmt.Sprint(pubNs(t, jsonclient.PushesOf(msgs, "tf:a", "pub"))); got != "[1 4 6]" {
			t.Fatalf("filtered subscriber got %s: %v", got, msgs)
		}
		if u := jsonclient.PushesOf(msgs, "tf:a", "unsubscribe"); len(u) > 0 {
			t.Fatalf("filtered subscriber unsubscribed: %v", u)
		}
		if p := jsonclient.PushesOf(msgs, "tf:a", "pub")[0]; jsonclient.Path(p, "tags", "ticker") != "BTC" {
			t.Fatalf("publication without its tags: %v", p)
		}
	}
	if got := fmt.Sprint(pubNs(t, jsonclient.PushesOf(all.Drain(), "tf:a", "pub"))); got != "[1 2 3 4 5 6]" {
		t.Fatalf("unfiltered subscriber got %s", got)
	}
}

// TestTagsFilterRecovery: as the reference, stream recovery is judged on
// the whole stream and then gives only the matching publications.
func TestTagsFilterRecovery(t *testing.T) {
	t.Parallel()
	n := tagsNode(t)
	sp := publishTagged(t, n.hub, "tf:r", 1, map[string]string{"k": "a"})
	for i, v := range []string{"b", "a", "b", "a"} {
		sp = publishTagged(t, n.hub, "tf:r", i+2, map[string]string{"k": v})
	}
	c := n.dial(t)
	c.Connect("u")
	res := c.MustSubscribe(2, "tf:r", recoverReq(1, sp.Epoch)+`,"tf":{"key":"k","cmp":"eq","val":"a"}`)
	if res["recovered"] != true || jsonclient.Num(res["offset"]) != 1 {
		t.Fatalf("subscribe result %v", res)
	}
	if got := fmt.Sprint(pubOffsets(t, res["publications"])); got != "[3 5]" {
		t.Fatalf("recovered %s, want [3 5]", got)
	}
	publishTagged(t, n.hub, "tf:r", 6, map[string]string{"k": "b"})
	publishTagged(t, n.hub, "tf:r", 7, map[string]string{"k": "a"})
	msgs := c.Drain()
	if got := fmt.Sprint(pubNs(t, jsonclient.PushesOf(msgs, "tf:r", "pub"))); got != "[7]" {
		t.Fatalf("live after recovery %s: %v", got, msgs)
	}
}

// TestTagsFilterRefusals: a filter where the namespace does not allow
// one, and malformed or oversized ones, are answered with error 107; the
// connection stays usable and other subscribers are unaffected.
func TestTagsFilterRefusals(t *testing.T) {
	t.Parallel()
	n := tagsNode(t)
	other := n.dial(t)
	other.Connect("o")
	other.MustSubscribe(2, "tf:x", `"tf":{"key":"k","cmp":"ex"}`)
	c := n.dial(t)
	c.Connect("u")
	deep := `{"key":"k","cmp":"eq","val":"v"}`
	for i := 0; i < 8; i++ {
		deep = `{"op":"not","nodes":[` + deep + `]}`
	}
	// About as deep as a 64 KiB WebSocket message allows: decoded, then refused.
	abyss := strings.Repeat(`{"op":"not","nodes":[`, 2500) + `{"key":"k","cmp":"ex"}` + strings.Repeat(`]}`, 2500)
	many := `"v0"`
	for i := 1; i <= 128; i++ {
		many += fmt.Sprintf(`,"v%d"`, i)
	}
	id := 2
	for name, req := range map[string]string{
		"not allowed":       `"channel":"nf:x","tf":{"key":"k","cmp":"eq","val":"v"}`,
		"unknown operator":  `"channel":"tf:x","tf":{"key":"k","cmp":"like","val":"v"}`,
		"unknown op":        `"channel":"tf:x","tf":{"op":"xor","nodes":[{"key":"k","cmp":"ex"}]}`,
		"nested too deep":   `"channel":"tf:x","tf":` + deep,
		"nested 2500 deep":  `"channel":"tf:x","tf":` + abyss,
		"too many values":   `"channel":"tf:x","tf":{"key":"k","cmp":"in","vals":[` + many + `]}`,
		"missing val":       `"channel":"tf:x","tf":{"key":"k","cmp":"eq"}`,
		"not with 2 nodes":  `"channel":"tf:x","tf":{"op":"not","nodes":[{"key":"k","cmp":"ex"},{"key":"j","cmp":"ex"}]}`,
		"empty filter node": `"channel":"tf:x","tf":{}`,
	} {
		id++
		m := c.Call(fmt.Sprintf(`{"id":%d,"subscribe":{%s}}`, id, req))
		if jsonclient.ErrorCode(m) != 107 {
			t.Errorf("%s: %v, want error 107", name, m)
		}
	}
	// Still connected and able to subscribe; the other subscriber still
	// receives.
	c.MustSubscribe(100, "tf:x", `"tf":{"key":"k","cmp":"ex"}`)
	publishTagged(t, n.hub, "tf:x", 1, map[string]string{"k": "1"})
	for _, cl := range []*rawClient{c, other} {
		if got := len(jsonclient.PushesOf(cl.Drain(), "tf:x", "pub")); got != 1 {
			t.Fatalf("%d publications after the refusals", got)
		}
	}
}

// TestTagsFilterNoDelta: a filter and delta compression are mutually
// exclusive, as in the reference: a subscribe asking for both is refused
// with 107 (it used to be accepted without delta); the connection stays
// and the same channel with only the filter works.
func TestTagsFilterNoDelta(t *testing.T) {
	t.Parallel()
	n := tagsNode(t)
	c := n.dial(t)
	c.Connect("u")
	if m := c.Subscribe(2, "tf:d", `"delta":"fossil","tf":{"key":"k","cmp":"ex"}`); jsonclient.ErrorCode(m) != 107 {
		t.Fatalf("filter with delta: %v, want error 107", m)
	}
	c.MustSubscribe(3, "tf:d", `"tf":{"key":"k","cmp":"ex"}`)
	if _, err := n.hub.Publish(context.Background(), "tf:d", deltaDoc(1), hub.PublishOptions{Tags: map[string]string{"k": "1"}}); err != nil {
		t.Fatal(err)
	}
	if pubs := jsonclient.PushesOf(c.Drain(), "tf:d", "pub"); len(pubs) != 1 {
		t.Fatalf("%d publications", len(pubs))
	}
}

// TestTagsFilterShared: subscribers with the same filter (in/nin values in
// any order) share one copy of it on the node, and the node lets go of a
// filter with its last subscriber, however it leaves (unsubscribe, a
// dropped connection).
func TestTagsFilterShared(t *testing.T) {
	t.Parallel()
	n := tagsNode(t)
	var clients []*rawClient
	for i, f := range []string{
		`{"key":"k","cmp":"in","vals":["a","b"]}`,
		`{"key":"k","cmp":"in","vals":["b","a"]}`,
		`{"key":"k","cmp":"in","vals":["a","b"]}`,
		`{"key":"k","cmp":"eq","val":"a"}`,
	} {
		c := n.dial(t)
		c.Connect(fmt.Sprint("u", i))
		c.MustSubscribe(2, "tf:s", `"tf":`+f)
		clients = append(clients, c)
	}
	if f, u := n.hub.TagsFilters(); f != 2 || u != 4 {
		t.Fatalf("%d filters for %d subscriptions, want 2 for 4", f, u)
	}
	publishTagged(t, n.hub, "tf:s", 1, map[string]string{"k": "b"})
	for i, c := range clients {
		want := 1
		if i == 3 {
			want = 0
		}
		if got := len(jsonclient.PushesOf(c.Drain(), "tf:s", "pub")); got != want {
			t.Fatalf("client %d got %d publications, want %d", i, got, want)
		}
	}
	if m := clients[0].Call(`{"id":3,"unsubscribe":{"channel":"tf:s"}}`); m["error"] != nil {
		t.Fatal(m)
	}
	clients[3].Drop()
	testenv.Eventually(t, "filters released", 5*time.Second, func() bool {
		f, u := n.hub.TagsFilters()
		return f == 1 && u == 2
	})
	clients[1].Drop()
	clients[2].Drop()
	testenv.Eventually(t, "no filter left", 5*time.Second, func() bool {
		f, _ := n.hub.TagsFilters()
		return f == 0
	})
}

// TestPublishTagsBound: a publication's tags, keys and values together,
// are bounded per namespace (4096 bytes by default, -1 none): over the
// bound the publish is refused with error 107 naming the field, and
// nothing is delivered.
func TestPublishTagsBound(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("def", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowTagsFilter: true}),
		ns("small", hub.NamespaceOptions{TagsMaxSize: 10}),
		ns("free", hub.NamespaceOptions{TagsMaxSize: -1}),
	}}})
	c := n.dial(t)
	c.Connect("u1")
	c.MustSubscribe(2, "def:a", `"tf":{"key":"k","cmp":"ex"}`)
	publish := func(ch string, tags map[string]string) error {
		_, err := n.hub.Publish(context.Background(), ch, []byte(`{}`), hub.PublishOptions{Tags: tags})
		return err
	}
	refused := func(ch string, tags map[string]string) {
		t.Helper()
		err := publish(ch, tags)
		var he *hub.Error
		if !errors.As(err, &he) || he.Code != 107 || !strings.HasPrefix(he.Message, "tags: ") {
			t.Fatalf("publish to %s with %d tags: %v, want error 107 naming tags", ch, len(tags), err)
		}
	}
	accepted := func(ch string, tags map[string]string) {
		t.Helper()
		if err := publish(ch, tags); err != nil {
			t.Fatalf("publish to %s: %v", ch, err)
		}
	}
	accepted("def:a", map[string]string{"k": strings.Repeat("v", hub.DefaultTagsMaxSize-1)})
	refused("def:a", map[string]string{"k": strings.Repeat("v", hub.DefaultTagsMaxSize)})
	many := map[string]string{}
	for i := 0; len(many)*8 <= hub.DefaultTagsMaxSize; i++ {
		many[fmt.Sprintf("key%05d", i)] = ""
	}
	refused("def:a", many)
	accepted("small:a", map[string]string{"abcde": "12345"})
	refused("small:a", map[string]string{"abcde": "123456"})
	accepted("free:a", map[string]string{"k": strings.Repeat("v", 65000)})
	msgs := c.Drain()
	if got := len(jsonclient.PushesOf(msgs, "def:a", "pub")); got != 1 {
		t.Fatalf("subscriber got %d publications, want the one accepted: %v", got, msgs)
	}
}

// TestTagsFilterWrongJSONTypes: a filter whose JSON has the wrong types
// (a number for a string, an object for a list) cannot be decoded, and
// neither can the command that carries it: as in the reference, which
// decodes the filter with the command and closes the connection with
// 3501 on any command it cannot decode, the connection is closed with
// 3501 (bad request). A well-typed filter that breaks a rule is answered
// with error 107 instead (TestTagsFilterRefusals).
func TestTagsFilterWrongJSONTypes(t *testing.T) {
	t.Parallel()
	n := tagsNode(t)
	for name, tf := range map[string]string{
		"number for val":    `{"key":"k","cmp":"eq","val":5}`,
		"string for nodes":  `{"op":"and","nodes":"x"}`,
		"number in vals":    `{"key":"k","cmp":"in","vals":[1]}`,
		"list for a filter": `[{"key":"k","cmp":"ex"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			c := n.dial(t)
			c.Connect("u")
			c.Send(`{"id":2,"subscribe":{"channel":"tf:x","tf":` + tf + `}}`)
			c.ExpectClose(3501, "bad request")
		})
	}
}
