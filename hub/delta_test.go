package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/centrifugal/fdelta"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/protocol"
)

// deltaDoc is a ~2 KB JSON document whose seq field is the only change
// from one to the next, the case delta compression is for.
func deltaDoc(seq int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"seq":%d,"items":[`, seq)
	for i := range 30 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item number %d","price":%d.25,"tags":["a","b","c"]}`, i, i, 100+i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func deltaNamespaces(extra hub.NamespaceOptions) []hub.Namespace {
	extra.AllowSubscribeForClient = true
	extra.AllowedDeltaTypes = []string{hub.DeltaFossil}
	extra.DeltaPublish = true
	plain := extra
	plain.AllowedDeltaTypes = nil
	return []hub.Namespace{ns("dd", extra), ns("plain", plain)}
}

// deltaReader rebuilds publication data as a delta subscriber does (as
// centrifuge-js): over JSON the data is a JSON string, a delta applies to
// the previous data.
type deltaReader struct {
	t    *testing.T
	prev []byte
	full int
	diff int
}

func (r *deltaReader) apply(data []byte, delta bool) []byte {
	r.t.Helper()
	if !delta {
		r.full++
		r.prev = data
		return data
	}
	r.diff++
	out, err := fdelta.Apply(r.prev, data)
	if err != nil {
		r.t.Fatalf("apply delta of %d bytes to %d bytes: %v", len(data), len(r.prev), err)
	}
	r.prev = out
	return out
}

// applyJSON takes a publication pushed over JSON.
func (r *deltaReader) applyJSON(v any) []byte {
	r.t.Helper()
	pub, ok := v.(map[string]any)
	if !ok {
		r.t.Fatalf("not a publication: %v", v)
	}
	s, ok := pub["data"].(string)
	if !ok {
		r.t.Fatalf("delta subscription's data is not a JSON string: %v", pub["data"])
	}
	delta, _ := pub["delta"].(bool)
	return r.apply([]byte(s), delta)
}

func publishDoc(t *testing.T, h *hub.Hub, ch string, seq int) {
	t.Helper()
	if _, err := h.Publish(context.Background(), ch, deltaDoc(seq), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestDeltaJSON: the first publication after subscribe goes in full, the
// next ones as small deltas that rebuild the data; a subscriber without
// delta and one in a namespace that does not allow it get plain data.
func TestDeltaJSON(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: deltaNamespaces(hub.NamespaceOptions{})}})
	c := n.dial(t)
	c.Connect("u")
	if res := c.MustSubscribe(2, "dd:doc", `"delta":"fossil"`); res["delta"] != true {
		t.Fatalf("subscribe result without delta: %v", res)
	}
	plain := n.dial(t)
	plain.Connect("p")
	if res := plain.MustSubscribe(2, "dd:doc", ""); res["delta"] != nil {
		t.Fatalf("subscribe without delta got delta: %v", res)
	}
	refused := n.dial(t)
	refused.Connect("r")
	// As the reference: a delta type the namespace does not allow is not
	// an error, the subscription goes without.
	if res := refused.MustSubscribe(2, "plain:doc", `"delta":"fossil"`); res["delta"] != nil {
		t.Fatalf("delta granted where not allowed: %v", res)
	}
	for i := 1; i <= 5; i++ {
		publishDoc(t, n.hub, "dd:doc", i)
		publishDoc(t, n.hub, "plain:doc", i)
	}
	r := &deltaReader{t: t}
	for i, m := range jsonclient.PushesOf(c.Drain(), "dd:doc", "pub") {
		raw, _ := json.Marshal(m["data"])
		if got := r.applyJSON(m); string(got) != string(deltaDoc(i+1)) {
			t.Fatalf("publication %d rebuilt as %s", i+1, got)
		}
		if i > 0 && len(raw) > 200 {
			t.Fatalf("publication %d: %d bytes of delta for a one-field change", i+1, len(raw))
		}
	}
	if r.full != 1 || r.diff != 4 {
		t.Fatalf("%d full and %d deltas, want 1 and 4", r.full, r.diff)
	}
	for i, cl := range []*rawClient{plain, refused} {
		pubs := jsonclient.PushesOf(cl.Drain(), []string{"dd:doc", "plain:doc"}[i], "pub")
		if len(pubs) != 5 {
			t.Fatalf("%d publications without delta, want 5", len(pubs))
		}
		for i, m := range pubs {
			var want any
			if err := json.Unmarshal(deltaDoc(i+1), &want); err != nil {
				t.Fatal(err)
			}
			if m["delta"] != nil || jsonclient.Compact(t, m["data"]) != jsonclient.Compact(t, want) {
				t.Fatalf("publication without delta: %v", m)
			}
		}
	}
}

// TestDeltaPublishOff: without delta_publish (Centrifugo's default) a
// subscriber that negotiated delta gets every publication in full, over
// JSON as a JSON string of the payload, and delta stays unset.
func TestDeltaPublishOff(t *testing.T) {
	t.Parallel()
	full := hub.NamespaceOptions{AllowSubscribeForClient: true, AllowedDeltaTypes: []string{hub.DeltaFossil}}
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{ns("full", full)}}})
	c := n.dial(t)
	c.Connect("u")
	if res := c.MustSubscribe(2, "full:doc", `"delta":"fossil"`); res["delta"] != true {
		t.Fatalf("subscribe result without delta: %v", res)
	}
	for i := 1; i <= 3; i++ {
		publishDoc(t, n.hub, "full:doc", i)
	}
	pubs := jsonclient.PushesOf(c.Drain(), "full:doc", "pub")
	if len(pubs) != 3 {
		t.Fatalf("%d publications, want 3", len(pubs))
	}
	for i, m := range pubs {
		if s, ok := m["data"].(string); !ok || s != string(deltaDoc(i+1)) || m["delta"] != nil {
			t.Fatalf("publication %d: %v, want the payload in full as a JSON string", i+1, m)
		}
	}
}

// TestDeltaPerPublication: without delta_publish, a publication with
// PublishOptions.Delta (the server API's delta flag) goes as a delta to a
// subscriber that negotiated delta, one without it in full, and a
// subscriber without delta gets plain data either way.
func TestDeltaPerPublication(t *testing.T) {
	t.Parallel()
	full := hub.NamespaceOptions{AllowSubscribeForClient: true, AllowedDeltaTypes: []string{hub.DeltaFossil}}
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{ns("full", full)}}})
	c := n.dial(t)
	c.Connect("u")
	c.MustSubscribe(2, "full:doc", `"delta":"fossil"`)
	plain := n.dial(t)
	plain.Connect("p")
	plain.MustSubscribe(2, "full:doc", "")
	flags := []bool{true, true, false, true}
	for i, delta := range flags {
		if _, err := n.hub.Publish(context.Background(), "full:doc", deltaDoc(i), hub.PublishOptions{Delta: delta}); err != nil {
			t.Fatal(err)
		}
	}
	r := &deltaReader{t: t}
	pubs := jsonclient.PushesOf(c.Drain(), "full:doc", "pub")
	if len(pubs) != len(flags) {
		t.Fatalf("%d publications, want %d", len(pubs), len(flags))
	}
	for i, m := range pubs {
		// The first has no base, the third asks for none.
		if got := r.applyJSON(m); string(got) != string(deltaDoc(i)) || (m["delta"] == true) != (i == 1 || i == 3) {
			t.Fatalf("publication %d: %.200v", i, m)
		}
	}
	for i, m := range jsonclient.PushesOf(plain.Drain(), "full:doc", "pub") {
		if _, isString := m["data"].(string); isString || m["delta"] != nil {
			t.Fatalf("publication %d to a subscriber without delta: %.200v", i, m)
		}
	}
}

// TestDeltaProtobuf: the same over Protobuf, where a delta is the raw
// Fossil delta and a full publication the payload itself.
func TestDeltaProtobuf(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: deltaNamespaces(hub.NamespaceOptions{})}})
	c := n.dialProtobuf(t)
	tok := token(t, auth.ConnectClaims{User: "u"})
	c.Call(&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{Token: tok}})
	rep := c.Call(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "dd:doc", Delta: hub.DeltaFossil}})
	if rep.Subscribe == nil || !rep.Subscribe.Delta {
		t.Fatalf("subscribe reply %v", rep)
	}
	for i := 1; i <= 5; i++ {
		publishDoc(t, n.hub, "dd:doc", i)
	}
	r := &deltaReader{t: t}
	for i := 1; i <= 5; i++ {
		m := c.Next()
		if m.Push == nil || m.Push.Pub == nil {
			t.Fatalf("want publication %d, got %v", i, m)
		}
		if i > 1 && len(m.Push.Pub.Data) > 200 {
			t.Fatalf("publication %d: %d bytes of delta", i, len(m.Push.Pub.Data))
		}
		if got := r.apply(m.Push.Pub.Data, m.Push.Pub.Delta); string(got) != string(deltaDoc(i)) {
			t.Fatalf("publication %d rebuilt as %s", i, got)
		}
	}
	if r.full != 1 || r.diff != 4 {
		t.Fatalf("%d full and %d deltas, want 1 and 4", r.full, r.diff)
	}
}

// TestDeltaLateSubscriber: a subscriber that joins later starts with a
// full publication while the earlier one goes on with deltas.
func TestDeltaLateSubscriber(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: deltaNamespaces(hub.NamespaceOptions{})}})
	a := n.dial(t)
	a.Connect("a")
	a.MustSubscribe(2, "dd:doc", `"delta":"fossil"`)
	publishDoc(t, n.hub, "dd:doc", 1)
	publishDoc(t, n.hub, "dd:doc", 2)
	b := n.dial(t)
	b.Connect("b")
	b.MustSubscribe(2, "dd:doc", `"delta":"fossil"`)
	publishDoc(t, n.hub, "dd:doc", 3)
	publishDoc(t, n.hub, "dd:doc", 4)
	ra, rb := &deltaReader{t: t}, &deltaReader{t: t}
	for i, m := range jsonclient.PushesOf(a.Drain(), "dd:doc", "pub") {
		if got := ra.applyJSON(m); string(got) != string(deltaDoc(i+1)) {
			t.Fatalf("a: publication %d rebuilt as %s", i+1, got)
		}
	}
	for i, m := range jsonclient.PushesOf(b.Drain(), "dd:doc", "pub") {
		if got := rb.applyJSON(m); string(got) != string(deltaDoc(i+3)) {
			t.Fatalf("b: publication %d rebuilt as %s", i+3, got)
		}
	}
	if ra.full != 1 || ra.diff != 3 || rb.full != 1 || rb.diff != 1 {
		t.Fatalf("a: %d full %d deltas (want 1, 3); b: %d full %d deltas (want 1, 1)", ra.full, ra.diff, rb.full, rb.diff)
	}
}

// TestDeltaRecovery: recovered publications come as the reference sends
// them, the first in full and the next ones as deltas, and the first live
// publication after them is a delta against the last recovered one.
// With keeper, another delta subscriber keeps the channel's base on the
// node while the recovering one is away; without, the base comes from the
// recovered publications.
func TestDeltaRecovery(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{true, false} {
		t.Run(fmt.Sprintf("keeper=%v", keep), func(t *testing.T) {
			t.Parallel()
			testDeltaRecovery(t, keep)
		})
	}
}

func testDeltaRecovery(t *testing.T, keep bool) {
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: deltaNamespaces(hub.NamespaceOptions{
		ForceRecovery: true, HistorySize: 100, HistoryTTL: time.Minute,
	})}})
	if keep {
		keeper := n.dial(t)
		keeper.Connect("k")
		keeper.MustSubscribe(2, "dd:doc", `"delta":"fossil"`)
	}
	publishDoc(t, n.hub, "dd:doc", 1)
	publishDoc(t, n.hub, "dd:doc", 2)
	c := n.dial(t)
	c.Connect("u")
	res := c.MustSubscribe(2, "dd:doc", `"delta":"fossil"`)
	epoch, _ := res["epoch"].(string)
	c.Call(`{"id":3,"unsubscribe":{"channel":"dd:doc"}}`)
	for i := 3; i <= 5; i++ {
		publishDoc(t, n.hub, "dd:doc", i)
	}
	res = c.MustSubscribe(4, "dd:doc", `"delta":"fossil",`+recoverReq(2, epoch))
	if res["recovered"] != true || res["delta"] != true {
		t.Fatalf("recovery result %v", res)
	}
	r := &deltaReader{t: t}
	pubs, _ := res["publications"].([]any)
	if len(pubs) != 3 {
		t.Fatalf("recovered %d publications, want 3", len(pubs))
	}
	for i, p := range pubs {
		if got := r.applyJSON(p); string(got) != string(deltaDoc(i+3)) {
			t.Fatalf("recovered publication %d rebuilt as %s", i+3, got)
		}
	}
	if r.full != 1 || r.diff != 2 {
		t.Fatalf("recovered: %d full, %d deltas; want 1 and 2", r.full, r.diff)
	}
	publishDoc(t, n.hub, "dd:doc", 6)
	live := jsonclient.PushesOf(c.Drain(), "dd:doc", "pub")
	if len(live) != 1 || live[0]["delta"] != true {
		t.Fatalf("first live publication after recovery: %v", live)
	}
	if got := r.applyJSON(live[0]); string(got) != string(deltaDoc(6)) {
		t.Fatalf("live publication rebuilt as %s", got)
	}
}

// TestDeltaDropOldest: a drop_oldest queue that drops publications of a
// delta subscription drops the deltas built on them too, and the next
// publication after a drop is whole: everything the client gets applies.
func TestDeltaDropOldest(t *testing.T) {
	t.Parallel()
	events := make(chan hub.BackpressureEvent, 64)
	n := startNodeMem(t, hub.Config{
		Channels: hub.ChannelConfig{Namespaces: deltaNamespaces(hub.NamespaceOptions{QueuePolicy: hub.QueueDropOldest})},
		Client:   hub.ClientConfig{QueueMaxSize: 8 << 10},
		Handlers: hub.Handlers{OnBackpressure: func(c *hub.Client, ev hub.BackpressureEvent) {
			select {
			case events <- ev:
			default:
			}
		}},
	})
	c, conn := n.dialMem(t)
	c.Connect("u")
	c.MustSubscribe(2, "dd:doc", `"delta":"fossil"`)
	conn.Stall()
	seq := 0
	for drops := 0; drops < 3; {
		if seq == 20000 {
			t.Fatal("20000 publications to a stalled reader and no drop")
		}
		seq++
		publishDoc(t, n.hub, "dd:doc", seq)
		select {
		case <-events:
			drops++
		default:
		}
	}
	conn.Resume()
	seq++
	publishDoc(t, n.hub, "dd:doc", seq)
	// Every publication that follows a gap (the drops) comes in full, and
	// there is a gap. Which publications the writer had taken before the
	// stall, and so which arrive before the first gap, is up to timing:
	// sometimes none, and the first to arrive is already a restart.
	r := &deltaReader{t: t}
	got, gaps, prev := 0, 0, 0
	for {
		m := c.Next()
		pub := jsonclient.Path(m, "push", "pub")
		if pub == nil {
			continue
		}
		data := r.applyJSON(pub)
		var doc struct{ Seq int }
		if err := json.Unmarshal(data, &doc); err != nil || string(data) != string(deltaDoc(doc.Seq)) {
			t.Fatalf("rebuilt publication is not a document: %s (%v)", data, err)
		}
		if doc.Seq != prev+1 {
			gaps++
			if delta, _ := pub.(map[string]any)["delta"].(bool); delta {
				t.Fatalf("publication %d, the first after a drop (the last before it was %d), is a delta", doc.Seq, prev)
			}
		}
		prev = doc.Seq
		got++
		if doc.Seq == seq {
			break
		}
	}
	if got >= seq || gaps == 0 {
		t.Fatalf("%d of %d publications arrived, %d gaps: nothing was dropped", got, seq, gaps)
	}
}

func TestDeltaTypeValidation(t *testing.T) {
	t.Parallel()
	bad := hub.ChannelConfig{Namespaces: []hub.Namespace{ns("dd", hub.NamespaceOptions{AllowedDeltaTypes: []string{"zstd"}})}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `Namespaces[0].AllowedDeltaTypes[0]: unknown delta type "zstd"`) {
		t.Fatalf("unknown delta type: %v", err)
	}
	good := hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{AllowedDeltaTypes: []string{hub.DeltaFossil}}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestDeltaJSONNotUTF8: a delta that cuts a multi-byte character cannot
// travel in a JSON string, so that publication goes in full; Protobuf
// subscribers still get the delta.
func TestDeltaJSONNotUTF8(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: deltaNamespaces(hub.NamespaceOptions{})}})
	c := n.dial(t)
	c.Connect("u")
	c.MustSubscribe(2, "dd:txt", `"delta":"fossil"`)
	pb := n.dialProtobuf(t)
	pb.Call(&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{Token: token(t, auth.ConnectClaims{User: "p"})}})
	pb.Call(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "dd:txt", Delta: hub.DeltaFossil}})
	pad := strings.Repeat("é", 500)
	docs := []string{`{"t":"` + pad + `é` + pad + `"}`, `{"t":"` + pad + `è` + pad + `"}`}
	for _, d := range docs {
		if _, err := n.hub.Publish(context.Background(), "dd:txt", []byte(d), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := &deltaReader{t: t}
	for i, m := range jsonclient.PushesOf(c.Drain(), "dd:txt", "pub") {
		if got := r.applyJSON(m); string(got) != docs[i] {
			t.Fatalf("JSON publication %d rebuilt as %s", i, got)
		}
	}
	if r.full != 2 {
		t.Fatalf("JSON: %d full, %d deltas; want the delta cutting a character sent in full", r.full, r.diff)
	}
	rp := &deltaReader{t: t}
	for i := range docs {
		m := pb.Next()
		if got := rp.apply(m.Push.Pub.Data, m.Push.Pub.Delta); string(got) != docs[i] {
			t.Fatalf("Protobuf publication %d rebuilt as %s", i, got)
		}
	}
	if rp.diff != 1 {
		t.Fatalf("Protobuf: %d deltas, want 1", rp.diff)
	}
}
