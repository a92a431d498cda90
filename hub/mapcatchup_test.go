package hub_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/protocol"
)

// catchUpNode has map namespaces whose catch-up is bounded: lt (at most 2
// changes recovered going live), lu (no bound), to (a timeout no request
// can meet) and th (an hour).
func catchUpNode(t *testing.T) *node {
	mapNS := func(name string, o hub.MapOptions) hub.Namespace {
		o.Mode = hub.MapPersistent
		o.StreamSize = 50
		return ns(name, hub.NamespaceOptions{AllowSubscribeForClient: true, SubscriptionType: hub.SubscriptionMap, Map: o})
	}
	return startNode(t, hub.Config{
		Engine: memory.New(memory.Config{}),
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			mapNS("lt", hub.MapOptions{LiveTransitionMaxPublicationLimit: 2}),
			mapNS("lu", hub.MapOptions{LiveTransitionMaxPublicationLimit: -1}),
			mapNS("to", hub.MapOptions{SubscribeCatchUpTimeout: time.Nanosecond}),
			mapNS("th", hub.MapOptions{SubscribeCatchUpTimeout: time.Hour}),
		}},
	})
}

// live_transition_max_publication_limit: a subscriber whose state read
// is followed by more changes than the limit gets error 112 on the
// request that would make it live, as centrifuge v0.40.1 answers; within
// the limit, or without a bound, it goes live with them.
func TestMapLiveTransitionLimit(t *testing.T) {
	t.Parallel()
	n := catchUpNode(t)
	for _, tc := range []struct {
		ch      string
		changes int
		err     int
	}{
		{"lt:a", 2, 0},
		{"lt:b", 3, int(protocol.ErrorUnrecoverablePosition)},
		{"lu:a", 40, 0},
	} {
		mapSet(t, n.hub, tc.ch, "k", `0`)
		c := n.dial(t)
		c.Connect("u")
		res := mustMapResult(t, mapSubscribe(c, 2, tc.ch, `"phase":2`))
		for i := range tc.changes {
			mapSet(t, n.hub, tc.ch, fmt.Sprint("k", i), `1`)
		}
		reply := mapSubscribe(c, 3, tc.ch, fmt.Sprintf(`"phase":1,"offset":%d,"epoch":%q`, num0(res["offset"]), res["epoch"]))
		if tc.err != 0 {
			jsonclient.WantError(t, reply, tc.err)
			continue
		}
		live := mustMapResult(t, reply)
		if num0(live["phase"]) != 0 || len(live["publications"].([]any)) != tc.changes {
			t.Errorf("%s: %d changes: live reply %v", tc.ch, tc.changes, live)
		}
	}
}

// subscribe_catch_up_timeout: a request of a flow that began longer ago
// than the timeout closes the connection with 3008; within it the flow
// goes live, and a first state request starts a flow again.
func TestMapSubscribeCatchUpTimeout(t *testing.T) {
	t.Parallel()
	n := catchUpNode(t)
	mapSet(t, n.hub, "th:a", "k", `1`)
	c := n.dial(t)
	c.Connect("u")
	if state, _ := syncMap(t, c, "th:a", 100, nil); state["k"] != "1" {
		t.Fatalf("flow within the timeout: %v", state)
	}

	mapSet(t, n.hub, "to:a", "k", `1`)
	c = n.dial(t)
	c.Connect("u")
	// Each first state request starts the flow anew.
	mustMapResult(t, mapSubscribe(c, 2, "to:a", `"phase":2`))
	res := mustMapResult(t, mapSubscribe(c, 3, "to:a", `"phase":2`))
	c.Send(fmt.Sprintf(`{"id":4,"subscribe":{"channel":"to:a","type":1,"phase":1,"offset":%d,"epoch":%q}}`, num0(res["offset"]), res["epoch"]))
	c.ExpectClose(int(protocol.DisconnectSlow), "")
}
