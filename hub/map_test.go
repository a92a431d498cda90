package hub_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// mapNode has map namespaces m (persistent, subscribers may publish and
// remove), e (ephemeral, keys live 1s, the key is the client's id) and
// the stream namespace s.
func mapNode(t *testing.T) *node {
	return startNode(t, hub.Config{
		Engine: memory.New(memory.Config{JanitorInterval: 50 * time.Millisecond}),
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("mm", hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionMap,
				Map: hub.MapOptions{Mode: hub.MapPersistent, StreamSize: 20, AllowPublishForSubscriber: true, AllowRemoveForSubscriber: true}}),
			ns("ee", hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionMap,
				Map: hub.MapOptions{Mode: hub.MapEphemeral, KeyTTL: time.Second, AllowPublishForClient: true, ClientKey: hub.MapKeyClientID, RemoveClientOnUnsubscribe: true}}),
			ns("ss", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowPublishForClient: true}),
		}},
	})
}

func mapSet(t *testing.T, h *hub.Hub, ch, key, data string) engine.StreamPosition {
	t.Helper()
	sp, err := h.MapPublish(context.Background(), ch, key, []byte(data))
	if err != nil {
		t.Fatalf("MapPublish(%s, %s): %v", ch, key, err)
	}
	return sp
}

// mapSubscribe sends one map subscribe request and returns the reply.
func mapSubscribe(c *rawClient, id int, ch string, extra string) map[string]any {
	req := fmt.Sprintf(`"channel":%q,"type":1`, ch)
	if extra != "" {
		req += "," + extra
	}
	return c.Call(fmt.Sprintf(`{"id":%d,"subscribe":{%s}}`, id, req))
}

func mustMapResult(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	res, ok := m["subscribe"].(map[string]any)
	if !ok {
		t.Fatalf("map subscribe failed: %v", m)
	}
	return res
}

// applyPubs applies map publications (state entries or changes) to state.
func applyPubs(t *testing.T, state map[string]string, v any) int {
	t.Helper()
	pubs, _ := v.([]any)
	for _, p := range pubs {
		m := p.(map[string]any)
		key, _ := m["key"].(string)
		if key == "" {
			t.Fatalf("map publication without a key: %v", m)
		}
		if m["removed"] == true {
			delete(state, key)
			continue
		}
		state[key] = jsonclient.Compact(t, m["data"])
	}
	return len(pubs)
}

// syncMap runs the whole flow as centrifuge-js does: state pages with
// limit, then stream pages from the first page's position until live.
// between runs after the first page.
func syncMap(t *testing.T, c *rawClient, ch string, limit int, between func()) (map[string]string, map[string]any) {
	t.Helper()
	return syncMapWith(t, c, ch, limit, "", between)
}

// syncMapWith is syncMap with fields every request of the flow adds
// (extra, as in mapSubscribe: a tags filter, delta).
func syncMapWith(t *testing.T, c *rawClient, ch string, limit int, extra string, between func()) (map[string]string, map[string]any) {
	t.Helper()
	with := func(fields string) string {
		if extra == "" {
			return fields
		}
		return fields + "," + extra
	}
	state := map[string]string{}
	id := 10
	cursor := ""
	var epoch string
	var offset int64
	pages := 0
	for {
		fields := fmt.Sprintf(`"phase":2,"limit":%d`, limit)
		if cursor != "" {
			fields += fmt.Sprintf(`,"cursor":%q,"offset":%d,"epoch":%q`, cursor, offset, epoch)
		}
		id++
		res := mustMapResult(t, mapSubscribe(c, id, ch, with(fields)))
		if num0(res["phase"]) != 2 || jsonclient.Num(res["type"]) != 1 {
			t.Fatalf("state page: %v", res)
		}
		if pages == 0 {
			epoch, offset = res["epoch"].(string), num0(res["offset"])
			if between != nil {
				between()
			}
		}
		pages++
		if n := applyPubs(t, state, res["state"]); n > limit {
			t.Fatalf("page of %d entries, limit %d", n, limit)
		}
		cursor, _ = res["cursor"].(string)
		if cursor == "" {
			break
		}
	}
	for {
		id++
		res := mustMapResult(t, mapSubscribe(c, id, ch, with(fmt.Sprintf(`"phase":1,"limit":%d,"offset":%d,"epoch":%q`, limit, offset, epoch))))
		applyPubs(t, state, res["publications"])
		if num0(res["phase"]) == 0 {
			return state, res
		}
		offset = num0(res["offset"])
	}
}

func TestMapSnapshotPagesThenLive(t *testing.T) {
	t.Parallel()
	n := mapNode(t)
	want := map[string]string{}
	for i := range 250 {
		key, data := fmt.Sprintf("k%03d", i), fmt.Sprintf(`{"v":%d}`, i)
		mapSet(t, n.hub, "mm:a", key, data)
		want[key] = data
	}
	c := n.dial(t)
	c.Connect("u")
	// Changes between the first page and the last must not be lost:
	// one to a key already read, one to a key not read yet, a removal and
	// a new key.
	state, live := syncMap(t, c, "mm:a", 100, func() {
		mapSet(t, n.hub, "mm:a", "k000", `{"v":"changed"}`)
		mapSet(t, n.hub, "mm:a", "k200", `{"v":"changed too"}`)
		if _, err := n.hub.MapRemove(context.Background(), "mm:a", "k001"); err != nil {
			t.Fatal(err)
		}
		mapSet(t, n.hub, "mm:a", "new", `{"v":"new"}`)
	})
	want["k000"], want["k200"], want["new"] = `{"v":"changed"}`, `{"v":"changed too"}`, `{"v":"new"}`
	delete(want, "k001")
	if fmt.Sprint(state) != fmt.Sprint(want) {
		t.Fatalf("synced %d keys, want %d; differences: %s", len(state), len(want), mapDiff(state, want))
	}
	if live["recoverable"] != true || live["recovered"] == true || num0(live["offset"]) != 254 {
		t.Fatalf("live reply: %v", live)
	}
	// Live changes follow, with their keys.
	mapSet(t, n.hub, "mm:a", "k002", `{"v":"live"}`)
	if _, err := n.hub.MapRemove(context.Background(), "mm:a", "k003"); err != nil {
		t.Fatal(err)
	}
	pubs := jsonclient.PushesOf(c.Drain(), "mm:a", "pub")
	if len(pubs) != 2 || pubs[0]["key"] != "k002" || jsonclient.Num(pubs[0]["offset"]) != 255 || pubs[1]["key"] != "k003" || pubs[1]["removed"] != true || pubs[1]["data"] != nil {
		t.Fatalf("live changes: %v", pubs)
	}
}

func mapDiff(got, want map[string]string) string {
	var b strings.Builder
	for k, v := range want {
		if got[k] != v {
			fmt.Fprintf(&b, "%s: %q want %q; ", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "%s: extra; ", k)
		}
	}
	return b.String()
}

func TestMapRecovery(t *testing.T) {
	t.Parallel()
	n := mapNode(t)
	mapSet(t, n.hub, "mm:r", "a", `1`)
	c := n.dial(t)
	c.Connect("u")
	_, live := syncMap(t, c, "mm:r", 100, nil)
	epoch, offset := live["epoch"].(string), num0(live["offset"])
	c.Drop()

	mapSet(t, n.hub, "mm:r", "b", `2`)
	if _, err := n.hub.MapRemove(context.Background(), "mm:r", "a"); err != nil {
		t.Fatal(err)
	}
	c2 := n.dial(t)
	c2.Connect("u")
	res := mustMapResult(t, mapSubscribe(c2, 2, "mm:r", fmt.Sprintf(`"phase":1,"recover":true,"offset":%d,"epoch":%q`, offset, epoch)))
	if num0(res["phase"]) != 0 || res["recovered"] != true || num0(res["offset"]) != offset+2 {
		t.Fatalf("recovering subscribe: %v", res)
	}
	state := map[string]string{"a": "1"}
	applyPubs(t, state, res["publications"])
	if fmt.Sprint(state) != `map[b:2]` {
		t.Fatalf("recovered state %v", state)
	}

	// Too far behind (the stream keeps 20 changes): error 112, and the
	// client reads the state again.
	for i := range 25 {
		mapSet(t, n.hub, "mm:r", "b", fmt.Sprint(i))
	}
	c3 := n.dial(t)
	c3.Connect("u")
	jsonclient.WantError(t, mapSubscribe(c3, 2, "mm:r", fmt.Sprintf(`"phase":1,"recover":true,"offset":%d,"epoch":%q`, offset, epoch)), 112)
	jsonclient.WantError(t, mapSubscribe(c3, 3, "mm:r", fmt.Sprintf(`"phase":1,"recover":true,"offset":%d,"epoch":"other"`, offset)), 112)
	// Without recover, a changed epoch is answered with the new one.
	res = mustMapResult(t, mapSubscribe(c3, 4, "mm:r", fmt.Sprintf(`"phase":1,"offset":%d,"epoch":"other"`, offset)))
	if res["epoch"] != epoch || num0(res["phase"]) != 1 {
		t.Fatalf("stream request in an old epoch: %v", res)
	}
}

func TestMapClientPublishAndRemove(t *testing.T) {
	t.Parallel()
	n := mapNode(t)
	c := n.dial(t)
	c.Connect("u")
	// Not subscribed: publishing needs a subscription in namespace m.
	jsonclient.WantError(t, c.Call(`{"id":2,"publish":{"channel":"mm:p","type":1,"key":"k","data":{"x":1}}}`), 103)
	syncMap(t, c, "mm:p", 100, nil)
	if m := c.Call(`{"id":3,"publish":{"channel":"mm:p","type":1,"key":"k","data":{"x":1}}}`); m["publish"] == nil {
		t.Fatalf("map publish: %v", m)
	}
	pubs := jsonclient.PushesOf(c.Drain(), "mm:p", "pub")
	if len(pubs) != 1 || pubs[0]["key"] != "k" || jsonclient.Compact(t, pubs[0]["data"]) != `{"x":1}` || jsonclient.Path(pubs[0], "info", "user") != "u" {
		t.Fatalf("own map publication: %v", pubs)
	}
	if m := c.Call(`{"id":4,"publish":{"channel":"mm:p","type":1,"key":"k","removed":true}}`); m["publish"] == nil {
		t.Fatalf("map remove: %v", m)
	}
	pubs = jsonclient.PushesOf(c.Drain(), "mm:p", "pub")
	if len(pubs) != 1 || pubs[0]["key"] != "k" || pubs[0]["removed"] != true {
		t.Fatalf("removal: %v", pubs)
	}
	// Removing it again is suppressed, as Centrifugo does (key_not_found):
	// answered as done, nothing appended or delivered, so the next change
	// is the next push and takes the next offset.
	if m := c.Call(`{"id":41,"publish":{"channel":"mm:p","type":1,"key":"k","removed":true}}`); m["publish"] == nil {
		t.Fatalf("map remove of a missing key: %v", m)
	}
	if m := c.Call(`{"id":42,"publish":{"channel":"mm:p","type":1,"key":"k2","data":{"x":2}}}`); m["publish"] == nil {
		t.Fatalf("map publish: %v", m)
	}
	if next := jsonclient.PushesOf(c.Drain(), "mm:p", "pub"); len(next) != 1 || next[0]["key"] != "k2" || num0(next[0]["offset"]) != num0(pubs[0]["offset"])+1 {
		t.Fatalf("after removing a missing key: %v, want k2 alone right after the removal %v", next, pubs[0])
	}

	// client_key: the key is the connection's id, whatever was sent; it
	// goes when the client unsubscribes.
	other := n.dial(t)
	other.Connect("w")
	syncMap(t, other, "ee:p", 100, nil)
	if m := c.Call(`{"id":5,"publish":{"channel":"ee:p","type":1,"key":"ignored","data":{"y":2}}}`); m["publish"] == nil {
		t.Fatalf("map publish with client_key: %v", m)
	}
	pubs = jsonclient.PushesOf(other.Drain(), "ee:p", "pub")
	if len(pubs) != 1 || pubs[0]["key"] != jsonclient.Path(pubs[0], "info", "client") {
		t.Fatalf("client_key publication: %v", pubs)
	}
}

func TestMapBadInput(t *testing.T) {
	t.Parallel()
	n := mapNode(t)
	c := n.dial(t)
	c.Connect("u")
	syncMap(t, c, "mm:b", 100, nil)
	long := strings.Repeat("x", hub.MaxMapKeyLength+1)
	for i, tc := range []struct {
		name, cmd string
		code      int
	}{
		{"page above max_page_size", `"subscribe":{"channel":"mm:c","type":1,"phase":2,"limit":1001}`, 107},
		{"negative limit", `"subscribe":{"channel":"mm:c","type":1,"phase":2,"limit":-1}`, 107},
		{"cursor longer than a key", `"subscribe":{"channel":"mm:c","type":1,"phase":2,"cursor":"` + long + `"}`, 107},
		{"phase live asked by the client", `"subscribe":{"channel":"mm:c","type":1}`, 107},
		{"stream phase without an epoch", `"subscribe":{"channel":"mm:c","type":1,"phase":1}`, 107},
		{"stream subscription to a map channel", `"subscribe":{"channel":"mm:c"}`, 107},
		{"map_users type for a map channel", `"subscribe":{"channel":"mm:c","type":3,"phase":2}`, 107},
		{"map subscription to a stream channel", `"subscribe":{"channel":"ss:c","type":1,"phase":2}`, 107},
		{"unknown subscription type", `"subscribe":{"channel":"ss:c","type":9}`, 107},
		{"tags filter on a map subscription", `"subscribe":{"channel":"mm:c","type":1,"phase":2,"tf":{"key":"a","cmp":"eq","val":"b"}}`, 107},
		{"key too long", `"publish":{"channel":"mm:b","type":1,"key":"` + long + `","data":{}}`, 107},
		{"empty key", `"publish":{"channel":"mm:b","type":1,"data":{}}`, 107},
		{"key with a control character", `"publish":{"channel":"mm:b","type":1,"key":"a\nb","data":{}}`, 107},
		{"removal with data", `"publish":{"channel":"mm:b","type":1,"key":"k","removed":true,"data":{}}`, 107},
		{"value without data", `"publish":{"channel":"mm:b","type":1,"key":"k"}`, 107},
		{"unknown publish type", `"publish":{"channel":"mm:b","type":7,"key":"k","data":{}}`, 107},
		{"stream publish to a map channel", `"publish":{"channel":"mm:b","data":{}}`, 107},
		{"map publish to a stream channel", `"publish":{"channel":"ss:c","type":1,"key":"k","data":{}}`, 107},
	} {
		m := c.Call(fmt.Sprintf(`{"id":%d,%s}`, 100+i, tc.cmd))
		if got := jsonclient.ErrorCode(m); got != tc.code {
			t.Errorf("%s: reply %v, want error %d", tc.name, m, tc.code)
		}
	}
	// The connection still works.
	if m := c.Call(`{"id":99,"publish":{"channel":"mm:b","type":1,"key":"k","data":{}}}`); m["publish"] == nil {
		t.Fatalf("map publish after bad input: %v", m)
	}
	if _, err := n.hub.Publish(context.Background(), "mm:b", []byte(`{}`), hub.PublishOptions{}); err == nil {
		t.Fatal("a stream publication to a map channel through the hub API was accepted")
	}
}

func TestMapKeyTTL(t *testing.T) {
	t.Parallel()
	n := mapNode(t)
	c := n.dial(t)
	c.Connect("u")
	syncMap(t, c, "ee:t", 100, nil)
	if m := c.Call(`{"id":3,"publish":{"channel":"ee:t","type":1,"data":{"x":1}}}`); m["publish"] == nil {
		t.Fatalf("map publish: %v", m)
	}
	// The key goes after its TTL, as a removal pushed to subscribers.
	deadline := time.Now().Add(10 * time.Second)
	var removal map[string]any
	for removal == nil && time.Now().Before(deadline) {
		for _, p := range jsonclient.PushesOf([]map[string]any{c.Next()}, "ee:t", "pub") {
			if p["removed"] == true {
				removal = p
			}
		}
	}
	if removal == nil {
		t.Fatal("no removal after the key's TTL")
	}
	late := n.dial(t)
	late.Connect("w")
	if state, _ := syncMap(t, late, "ee:t", 100, nil); len(state) != 0 {
		t.Fatalf("state after expiry: %v", state)
	}
}

func TestMapNamespaceNeedsMapEngine(t *testing.T) {
	t.Parallel()
	// An engine without engine.MapBroker, as NATS is.
	plain := struct{ engine.Engine }{memory.New(memory.Config{})}
	_, err := hub.New(hub.Config{Engine: plain, Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("mm", hub.NamespaceOptions{SubscriptionType: hub.SubscriptionMap, Map: hub.MapOptions{Mode: hub.MapPersistent}}),
	}}})
	var oe *hub.OptionError
	if !errors.As(err, &oe) || oe.Field != "Channels.Namespaces[0].SubscriptionType" || !strings.Contains(oe.Message, "keeps no map state") {
		t.Fatalf("hub.New with a map namespace on an engine without maps: %v", err)
	}
	for _, tc := range []struct {
		name  string
		o     hub.NamespaceOptions
		field string
	}{
		{"no mode", hub.NamespaceOptions{SubscriptionType: hub.SubscriptionMap}, "Map.Mode"},
		{"ephemeral without key_ttl", hub.NamespaceOptions{SubscriptionType: hub.SubscriptionMap, Map: hub.MapOptions{Mode: hub.MapEphemeral}}, "Map.KeyTTL"},
		{"persistent with key_ttl", hub.NamespaceOptions{SubscriptionType: hub.SubscriptionMap, Map: hub.MapOptions{Mode: hub.MapPersistent, KeyTTL: time.Second}}, "Map.KeyTTL"},
		{"unknown type", hub.NamespaceOptions{SubscriptionType: "tree"}, "SubscriptionType"},
		{"map options on a stream", hub.NamespaceOptions{Map: hub.MapOptions{Mode: hub.MapPersistent}}, "Map"},
		{"history on a map", hub.NamespaceOptions{SubscriptionType: hub.SubscriptionMap, HistorySize: 1, HistoryTTL: time.Second, Map: hub.MapOptions{Mode: hub.MapPersistent}}, "HistorySize"},
		{"bad client_key", hub.NamespaceOptions{SubscriptionType: hub.SubscriptionMap, Map: hub.MapOptions{Mode: hub.MapPersistent, ClientKey: "ip"}}, "Map.ClientKey"},
	} {
		_, err := hub.New(hub.Config{Engine: memory.New(memory.Config{}), Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{ns("mm", tc.o)}}})
		found := false
		for _, oe := range hub.OptionErrors(err) {
			found = found || oe.Field == "Channels.Namespaces[0]."+tc.field
		}
		if !found {
			t.Errorf("%s: %v, want a problem with %s", tc.name, err, tc.field)
		}
	}
}

// num0 is a JSON number that may be left out for zero.
func num0(v any) int64 {
	if v == nil {
		return 0
	}
	return jsonclient.Num(v)
}

func TestMapPresence(t *testing.T) {
	t.Parallel()
	mapNS := func(typ hub.SubscriptionType) hub.NamespaceOptions {
		return hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: typ, Map: hub.MapOptions{Mode: hub.MapRecoverable, KeyTTL: time.Minute}}
	}
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("game", hub.NamespaceOptions{AllowSubscribeForClient: true, MapClientsPresenceChannelPrefix: "clients:", MapUsersPresenceChannelPrefix: "users:"}),
		ns("clients", mapNS(hub.SubscriptionMapClients)),
		ns("users", mapNS(hub.SubscriptionMapUsers)),
	}}})
	a1, a2 := n.dial(t), n.dial(t)
	a1.Connect("alice")
	a2.Connect("alice")
	a1.MustSubscribe(2, "game:1", "")
	a2.MustSubscribe(2, "game:1", "")

	watcher := n.dial(t)
	watcher.Connect("w")
	// A map_clients channel is subscribed with type 2, map_users with 3.
	// The keys are set just after the subscribe replies: read the state
	// until it holds want keys.
	syncTyped := func(ch string, typ, want int) (map[string]any, map[string]any) {
		var res map[string]any
		entries := map[string]any{}
		for deadline := time.Now().Add(5 * time.Second); len(entries) < want && time.Now().Before(deadline); {
			res = mustMapResult(t, watcher.Call(fmt.Sprintf(`{"id":%d,"subscribe":{"channel":%q,"type":%d,"phase":2}}`, 10+typ, ch, typ)))
			state, _ := res["state"].([]any)
			for _, p := range state {
				m := p.(map[string]any)
				entries[m["key"].(string)] = m["info"]
			}
		}
		live := mustMapResult(t, watcher.Call(fmt.Sprintf(`{"id":%d,"subscribe":{"channel":%q,"type":%d,"phase":1,"offset":%d,"epoch":%q}}`, 20+typ, ch, typ, num0(res["offset"]), res["epoch"])))
		return entries, live
	}
	clients, _ := syncTyped("clients:game:1", 2, 2)
	if len(clients) != 2 {
		t.Fatalf("map_clients state: %v, want the two connections", clients)
	}
	for key, info := range clients {
		if jsonclient.Path(info.(map[string]any), "client") != key || jsonclient.Path(info.(map[string]any), "user") != "alice" {
			t.Fatalf("map_clients entry %s: info %v", key, info)
		}
	}
	users, _ := syncTyped("users:game:1", 3, 1)
	if len(users) != 1 || users["alice"] == nil {
		t.Fatalf("map_users state: %v, want alice once", users)
	}
	jsonclient.WantError(t, watcher.Call(`{"id":40,"subscribe":{"channel":"clients:game:2","type":1,"phase":2}}`), 107)
	jsonclient.WantError(t, watcher.Call(`{"id":41,"publish":{"channel":"clients:game:1","type":1,"key":"x","data":{}}}`), 107)

	// A connection that leaves is removed from map_clients; alice stays
	// in map_users while she has a connection.
	if m := a1.Call(`{"id":3,"unsubscribe":{"channel":"game:1"}}`); m["unsubscribe"] == nil {
		t.Fatalf("unsubscribe: %v", m)
	}
	var removed []map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for len(removed) == 0 && time.Now().Before(deadline) {
		for _, p := range jsonclient.PushesOf(watcher.Drain(), "clients:game:1", "pub") {
			if p["removed"] == true {
				removed = append(removed, p)
			}
		}
	}
	if len(removed) != 1 {
		t.Fatalf("no removal of the connection that left")
	}
	if pubs := jsonclient.PushesOf(watcher.Drain(), "users:game:1", "pub"); len(pubs) != 0 {
		t.Fatalf("map_users changes while alice stays: %v", pubs)
	}
}
