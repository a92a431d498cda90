package hub_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/protocol"
)

// compactionNamespaces are "cc", which allows channel compaction, with
// join/leave pushed to everyone and Fossil deltas, and "plain", the same
// without compaction.
func compactionNamespaces() []hub.Namespace {
	o := hub.NamespaceOptions{
		AllowSubscribeForClient: true, Presence: true, JoinLeave: true, ForcePushJoinLeave: true,
		AllowedDeltaTypes: []string{hub.DeltaFossil}, DeltaPublish: true, AllowChannelCompaction: true,
	}
	plain := o
	plain.AllowChannelCompaction = false
	return []hub.Namespace{ns("cc", o), ns("plain", plain)}
}

// pushByID picks the pushes of kind routed by channel id.
func pushByID(msgs []map[string]any, id int64, kind string) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		if jsonclient.Num(jsonclient.Path(m, "push", "id")) == id && jsonclient.Path(m, "push", "channel") == nil {
			if p, ok := jsonclient.Path(m, "push", kind).(map[string]any); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// TestCompactionJSON: a subscriber that sets flag bit 1 in a namespace
// allowing compaction gets the channel's id in its subscribe result, and
// its publication, join and leave pushes carry the id and no channel name;
// every such subscriber of a channel has the same id. Without the flag, or
// where the namespace does not allow it, pushes carry the name. The
// unsubscribe push keeps the name (centrifuge-js routes it by name).
func TestCompactionJSON(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: compactionNamespaces()}})
	a := n.dial(t)
	a.Connect("a")
	id := jsonclient.Num(a.MustSubscribe(2, "cc:room", `"flag":1`)["id"])
	if id <= 0 {
		t.Fatalf("subscribe with flag 1 got no channel id")
	}
	b := n.dial(t)
	b.Connect("b")
	if got := jsonclient.Num(b.MustSubscribe(2, "cc:room", `"flag":3`)["id"]); got != id {
		t.Fatalf("second subscriber's id %d, want the channel's %d", got, id)
	}
	named := n.dial(t)
	named.Connect("n")
	if res := named.MustSubscribe(2, "cc:room", ""); res["id"] != nil {
		t.Fatalf("subscribe without the flag got an id: %v", res)
	}
	other := n.dial(t)
	other.Connect("o")
	if res := other.MustSubscribe(2, "plain:room", `"flag":1`); res["id"] != nil {
		t.Fatalf("id where the namespace does not allow compaction: %v", res)
	}
	if res := other.MustSubscribe(3, "cc:other", `"flag":1`); jsonclient.Num(res["id"]) == id || res["id"] == nil {
		t.Fatalf("another channel's id %v, want one of its own (not %d)", res["id"], id)
	}
	a.Drain()
	if _, err := n.hub.Publish(context.Background(), "cc:room", []byte(`{"text":"hi"}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	msgs := a.Drain()
	if got := pushByID(msgs, id, "pub"); len(got) != 1 || jsonclient.Compact(t, got[0]["data"]) != `{"text":"hi"}` {
		t.Fatalf("compacted subscriber's pushes: %v", msgs)
	}
	// b joined after a: a got b's and n's join by id (drained above), and
	// now their leaves.
	b.Drop()
	named.Call(`{"id":9,"unsubscribe":{"channel":"cc:room"}}`)
	msgs = a.Drain()
	for len(pushByID(msgs, id, "leave")) < 2 {
		msgs = append(msgs, a.Next())
	}
	if len(jsonclient.PushesOf(msgs, "cc:room", "leave")) != 0 {
		t.Fatalf("a leave by name to a compacted subscriber: %v", msgs)
	}
	if got := jsonclient.PushesOf(named.Drain(), "cc:room", "pub"); len(got) != 1 {
		t.Fatalf("subscriber by name: %d publications, want 1", len(got))
	}
	// Server unsubscribe: by name.
	if err := n.hub.UnsubscribeUser(context.Background(), "a", "cc:room", ""); err != nil {
		t.Fatal(err)
	}
	for {
		m := a.Next()
		if jsonclient.Path(m, "push", "unsubscribe") != nil {
			if jsonclient.Path(m, "push", "channel") != "cc:room" || jsonclient.Path(m, "push", "id") != nil {
				t.Fatalf("unsubscribe push %v, want the channel by name", m)
			}
			break
		}
	}
	// The channel lost its compacted subscribers: a new one gets a new id,
	// never the old (a late push cannot reach the wrong subscription).
	if got := jsonclient.Num(a.MustSubscribe(4, "cc:room", `"flag":1`)["id"]); got == id || got <= 0 {
		t.Fatalf("resubscribe got id %d, want a new one (old %d)", got, id)
	}
}

// TestCompactionDeltaJSON: a compacted delta subscriber gets its full
// publication and its deltas by id, as a delta subscriber by name gets
// them by name.
func TestCompactionDeltaJSON(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: compactionNamespaces()}})
	c := n.dial(t)
	c.Connect("u")
	res := c.MustSubscribe(2, "cc:doc", `"delta":"fossil","flag":1`)
	id := jsonclient.Num(res["id"])
	if res["delta"] != true || id <= 0 {
		t.Fatalf("subscribe result %v, want delta and an id", res)
	}
	byName := n.dial(t)
	byName.Connect("v")
	byName.MustSubscribe(2, "cc:doc", `"delta":"fossil"`)
	for i := 1; i <= 3; i++ {
		publishDoc(t, n.hub, "cc:doc", i)
	}
	for _, r := range []struct {
		pubs []map[string]any
	}{{pushByID(c.Drain(), id, "pub")}, {jsonclient.PushesOf(byName.Drain(), "cc:doc", "pub")}} {
		d := &deltaReader{t: t}
		if len(r.pubs) != 3 {
			t.Fatalf("%d publications, want 3", len(r.pubs))
		}
		for i, m := range r.pubs {
			if got := d.applyJSON(m); string(got) != string(deltaDoc(i+1)) {
				t.Fatalf("publication %d rebuilt as %s", i+1, got)
			}
		}
		if d.full != 1 || d.diff != 2 {
			t.Fatalf("%d full and %d deltas, want 1 and 2", d.full, d.diff)
		}
	}
}

// TestCompactionProtobuf: the same over Protobuf, and a JSON and a
// Protobuf compacted subscriber of one channel share its id.
func TestCompactionProtobuf(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: compactionNamespaces()}})
	p := n.dialProtobuf(t)
	p.Connect("p")
	r := p.Call(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "cc:room", Flag: 1}})
	if r.Subscribe == nil || r.Subscribe.Id <= 0 {
		t.Fatalf("subscribe reply %v, want an id", r)
	}
	id := r.Subscribe.Id
	j := n.dial(t)
	j.Connect("j")
	if got := jsonclient.Num(j.MustSubscribe(2, "cc:room", `"flag":1`)["id"]); got != id {
		t.Fatalf("JSON subscriber's id %d, want %d", got, id)
	}
	if _, err := n.hub.Publish(context.Background(), "cc:room", []byte(`{"x":1}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	var join, pub bool
	for !join || !pub {
		push := p.Next().Push
		if push == nil {
			continue
		}
		if push.Channel != "" || push.Id != id {
			t.Fatalf("push %v, want id %d and no channel", push, id)
		}
		join = join || push.Join != nil && push.Join.Info.User == "j"
		pub = pub || push.Pub != nil && string(push.Pub.Data) == `{"x":1}`
	}
}

// TestCompactionNotForJSProtobuf: centrifuge-js over Protobuf (SDK name
// "js") cannot route pushes by id, so it gets none and its pushes carry
// the name; over JSON it gets one.
func TestCompactionNotForJSProtobuf(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: compactionNamespaces()}})
	p := n.dialProtobuf(t)
	tok := token(t, auth.ConnectClaims{User: "p"})
	if r := p.Call(&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{Token: tok, Name: "js"}}); r.Connect == nil {
		t.Fatalf("connect: %v", r)
	}
	r := p.Call(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "cc:room", Flag: 1}})
	if r.Subscribe == nil || r.Subscribe.Id != 0 {
		t.Fatalf("subscribe reply %v, want no id", r)
	}
	if _, err := n.hub.Publish(context.Background(), "cc:room", []byte(`{"x":1}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		if push := p.Next().Push; push != nil && push.Pub != nil {
			if push.Channel != "cc:room" || push.Id != 0 {
				t.Fatalf("push %v, want the channel by name", push)
			}
			break
		}
	}
	j := n.dial(t)
	if res := j.ConnectWith(`{"token":"` + token(t, auth.ConnectClaims{User: "j"}) + `","name":"js"}`); res["connect"] == nil {
		t.Fatalf("connect: %v", res)
	}
	if res := j.MustSubscribe(2, "cc:room", `"flag":1`); jsonclient.Num(res["id"]) <= 0 {
		t.Fatalf("centrifuge-js over JSON got no id: %v", res)
	}
}

// TestCompactionMap: a map subscription that asks for compaction gets the
// id in its live reply, and the changes after it carry the id.
func TestCompactionMap(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("mc", hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionMap,
			AllowChannelCompaction: true, Map: hub.MapOptions{Mode: hub.MapPersistent}}),
	}}})
	mapSet(t, n.hub, "mc:m", "a", `{"v":1}`)
	c := n.dial(t)
	c.Connect("u")
	state := mustMapResult(t, mapSubscribe(c, 2, "mc:m", `"phase":2,"flag":1`))
	live := mustMapResult(t, mapSubscribe(c, 3, "mc:m", fmt.Sprintf(`"phase":1,"flag":1,"offset":%d,"epoch":%q`,
		num0(state["offset"]), state["epoch"])))
	id := jsonclient.Num(live["id"])
	if num0(live["phase"]) != 0 || id <= 0 {
		t.Fatalf("live reply %v, want phase 0 and an id", live)
	}
	mapSet(t, n.hub, "mc:m", "b", `{"v":2}`)
	pubs := pushByID(c.Drain(), id, "pub")
	if len(pubs) != 1 || pubs[0]["key"] != "b" {
		t.Fatalf("changes by id: %v", pubs)
	}
}
