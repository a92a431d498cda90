package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

func mapDeltaNode(t *testing.T) *node {
	return startNode(t, hub.Config{
		Engine: memory.New(memory.Config{JanitorInterval: 50 * time.Millisecond}),
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("md", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowedDeltaTypes: []string{hub.DeltaFossil}, DeltaPublish: true, ClientPublishDebounceInterval: 50 * time.Millisecond,
				SubscriptionType: hub.SubscriptionMap, Map: hub.MapOptions{Mode: hub.MapPersistent, StreamSize: 50, MinPageSize: 1}}),
		}},
	})
}

// mapDeltaReaders rebuild a delta map subscriber's values as centrifuge-js
// does: one base per key.
type mapDeltaReaders struct {
	t    *testing.T
	keys map[string]*deltaReader
}

func (m *mapDeltaReaders) take(v any) (string, []byte) {
	m.t.Helper()
	pub := v.(map[string]any)
	key := pub["key"].(string)
	if pub["removed"] == true {
		delete(m.keys, key)
		return key, nil
	}
	r := m.keys[key]
	if r == nil {
		r = &deltaReader{t: m.t}
		m.keys[key] = r
	}
	return key, r.applyJSON(pub)
}

func (m *mapDeltaReaders) counts() (full, diff int) {
	for _, r := range m.keys {
		full, diff = full+r.full, diff+r.diff
	}
	return full, diff
}

// A map subscriber that negotiated Fossil gets every value as a JSON
// string (state, stream and recovered ones too) and each live change of a
// key as a delta against the key's previous value, the one from the state
// included.
func TestMapDeltaPerKey(t *testing.T) {
	t.Parallel()
	n := mapDeltaNode(t)
	for i := range 3 {
		mapSet(t, n.hub, "md:a", fmt.Sprintf("k%d", i), string(deltaDoc(i)))
	}
	c := n.dial(t)
	c.Connect("u")
	m := &mapDeltaReaders{t: t, keys: map[string]*deltaReader{}}
	id := 10
	res := mustMapResult(t, mapSubscribe(c, id, "md:a", `"phase":2,"limit":2,"delta":"fossil"`))
	epoch, offset := res["epoch"].(string), num0(res["offset"])
	for {
		for _, p := range res["state"].([]any) {
			m.take(p)
		}
		cursor, _ := res["cursor"].(string)
		if cursor == "" {
			break
		}
		id++
		res = mustMapResult(t, mapSubscribe(c, id, "md:a", fmt.Sprintf(`"phase":2,"limit":2,"delta":"fossil","cursor":%q,"offset":%d,"epoch":%q`, cursor, offset, epoch)))
	}
	// A change between the state and live comes with the stream.
	mapSet(t, n.hub, "md:a", "k1", string(deltaDoc(11)))
	id++
	live := mustMapResult(t, mapSubscribe(c, id, "md:a", fmt.Sprintf(`"phase":1,"delta":"fossil","offset":%d,"epoch":%q`, offset, epoch)))
	if num0(live["phase"]) != 0 || live["delta"] != true {
		t.Fatalf("live reply: %v", live)
	}
	for _, p := range live["publications"].([]any) {
		m.take(p)
	}
	for i, seq := range []int{100, 111, 102, 200} {
		key := fmt.Sprintf("k%d", i%3)
		mapSet(t, n.hub, "md:a", key, string(deltaDoc(seq)))
	}
	if _, err := n.hub.MapRemove(context.Background(), "md:a", "k2"); err != nil {
		t.Fatal(err)
	}
	pubs := jsonclient.PushesOf(c.Drain(), "md:a", "pub")
	if len(pubs) != 5 {
		t.Fatalf("%d live changes, want 5: %v", len(pubs), pubs)
	}
	for i, seq := range []int{100, 111, 102, 200} {
		key, got := m.take(pubs[i])
		if string(got) != string(deltaDoc(seq)) || key != fmt.Sprintf("k%d", i%3) {
			t.Fatalf("change %d of %s rebuilt as %.60s, want seq %d", i, key, got, seq)
		}
		if pubs[i]["delta"] != true {
			t.Fatalf("change %d went in full: %.200v", i, pubs[i])
		}
	}
	if key, _ := m.take(pubs[4]); key != "k2" {
		t.Fatalf("removal: %v", pubs[4])
	}
	if full, diff := m.counts(); full != 3 || diff != 3 {
		t.Fatalf("%d full values and %d deltas on the kept keys, want 3 and 3", full, diff)
	}
}

// A second subscriber joining after live changes were seen gets deltas
// against values it read from the state, and recovery keeps the chain.
func TestMapDeltaRecovery(t *testing.T) {
	t.Parallel()
	n := mapDeltaNode(t)
	mapSet(t, n.hub, "md:r", "k", string(deltaDoc(1)))
	c := n.dial(t)
	c.Connect("u")
	state, live := syncMapWith(t, c, "md:r", 100, `"delta":"fossil"`, nil)
	if live["delta"] != true || len(state) != 1 || jsonclient.Num(live["publish_debounce"]) != 50 {
		t.Fatalf("live reply %v, state %v", live, state)
	}
	epoch, offset := live["epoch"].(string), num0(live["offset"])
	c.Drop()
	mapSet(t, n.hub, "md:r", "k", string(deltaDoc(2)))
	c2 := n.dial(t)
	c2.Connect("u")
	res := mustMapResult(t, mapSubscribe(c2, 2, "md:r", fmt.Sprintf(`"phase":1,"recover":true,"delta":"fossil","offset":%d,"epoch":%q`, offset, epoch)))
	m := &mapDeltaReaders{t: t, keys: map[string]*deltaReader{}}
	if res["recovered"] != true || res["delta"] != true {
		t.Fatalf("recovering reply: %v", res)
	}
	for _, p := range res["publications"].([]any) {
		m.take(p)
	}
	mapSet(t, n.hub, "md:r", "k", string(deltaDoc(3)))
	pubs := jsonclient.PushesOf(c2.Drain(), "md:r", "pub")
	if len(pubs) != 1 || pubs[0]["delta"] != true {
		t.Fatalf("live change after recovery: %.300v", pubs)
	}
	if _, got := m.take(pubs[0]); string(got) != string(deltaDoc(3)) {
		t.Fatalf("rebuilt %.80s", got)
	}
}

func TestPublishDebounceValidation(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{-time.Millisecond, 1500 * time.Microsecond} {
		_, err := hub.New(hub.Config{Engine: memory.New(memory.Config{}), Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("x", hub.NamespaceOptions{ClientPublishDebounceInterval: d}),
		}}})
		if err == nil || !strings.Contains(err.Error(), "ClientPublishDebounceInterval") {
			t.Errorf("debounce %s: %v", d, err)
		}
	}
}
