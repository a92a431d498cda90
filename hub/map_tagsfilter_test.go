package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// mapTagsNode has the map namespace tg (persistent, tags filters allowed)
// and mm (persistent, no tags filter).
func mapTagsNode(t *testing.T) *node {
	return startNode(t, hub.Config{
		Engine: memory.New(memory.Config{JanitorInterval: 50 * time.Millisecond}),
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("tg", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowTagsFilter: true, SubscriptionType: hub.SubscriptionMap,
				Map: hub.MapOptions{Mode: hub.MapPersistent, StreamSize: 20, MinPageSize: 1}}),
			ns("mm", hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionMap,
				Map: hub.MapOptions{Mode: hub.MapPersistent, StreamSize: 20}}),
		}},
	})
}

func mapSetTags(t *testing.T, h *hub.Hub, ch, key, data string, tags map[string]string) {
	t.Helper()
	if _, err := h.MapPublishWith(context.Background(), ch, key, []byte(data), hub.MapChange{Tags: tags}); err != nil {
		t.Fatalf("MapPublishWith(%s, %s): %v", ch, key, err)
	}
}

const engFilter = `"tf":{"key":"team","cmp":"eq","val":"eng"}`

// A map subscriber with a tags filter gets the keys whose tags pass it, in
// the state pages, the stream pages and live; a removal without tags
// reaches it (it may hold the key).
func TestMapTagsFilter(t *testing.T) {
	t.Parallel()
	n := mapTagsNode(t)
	eng, sales := map[string]string{"team": "eng"}, map[string]string{"team": "sales"}
	for i := range 5 {
		mapSetTags(t, n.hub, "tg:a", fmt.Sprintf("e%d", i), fmt.Sprintf(`{"e":%d}`, i), eng)
		mapSetTags(t, n.hub, "tg:a", fmt.Sprintf("s%d", i), fmt.Sprintf(`{"s":%d}`, i), sales)
	}
	c := n.dial(t)
	c.Connect("u")
	state, _ := syncMapWith(t, c, "tg:a", 2, engFilter, func() {
		// In the stream pages: one passing change, one not.
		mapSetTags(t, n.hub, "tg:a", "e9", `{"e":9}`, eng)
		mapSetTags(t, n.hub, "tg:a", "s9", `{"s":9}`, sales)
	})
	want := `map[e0:{"e":0} e1:{"e":1} e2:{"e":2} e3:{"e":3} e4:{"e":4} e9:{"e":9}]`
	if fmt.Sprint(state) != want {
		t.Fatalf("filtered state %v, want %s", state, want)
	}
	mapSetTags(t, n.hub, "tg:a", "s1", `{"s":"live"}`, sales)
	mapSetTags(t, n.hub, "tg:a", "e1", `{"e":"live"}`, eng)
	if _, err := n.hub.MapRemove(context.Background(), "tg:a", "e2"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.hub.MapRemoveWith(context.Background(), "tg:a", "s2", hub.MapChange{Tags: sales}); err != nil {
		t.Fatal(err)
	}
	mapSetTags(t, n.hub, "tg:a", "e3", `{"e":"last"}`, eng)
	pubs := jsonclient.PushesOf(c.Drain(), "tg:a", "pub")
	var got []string
	for _, p := range pubs {
		got = append(got, fmt.Sprintf("%v %v", p["key"], p["removed"] == true))
	}
	if fmt.Sprint(got) != "[e1 false e2 true e3 false]" {
		t.Fatalf("live publications %v (%v)", got, pubs)
	}
}

// A tags filter where the namespace does not allow one, or with delta, is
// error 107, as on a stream channel.
func TestMapTagsFilterRefused(t *testing.T) {
	t.Parallel()
	n := mapTagsNode(t)
	c := n.dial(t)
	c.Connect("u")
	jsonclient.WantError(t, mapSubscribe(c, 2, "mm:a", `"phase":2,`+engFilter), 107)
	jsonclient.WantError(t, mapSubscribe(c, 3, "tg:a", `"phase":2,"delta":"fossil",`+engFilter), 107)
	jsonclient.WantError(t, mapSubscribe(c, 4, "tg:a", `"phase":2,"tf":{"op":"nope"}`), 107)
}
