package hub_test

import (
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// counterValue reads a counter of the hub's metrics by name and label.
func counterValue(t *testing.T, h *hub.Hub, name, label, value string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(h.Collectors()...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label == "" {
				return m.GetCounter().GetValue()
			}
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestJoinLeaveBoundInAStorm: a crowd joining one channel that pushes
// join/leave to everyone costs a push per subscriber per join, the square
// of the crowd. Above join_leave_max_subscribers the node stops, so the
// storm's connects and subscribes all complete and the pushes stay near
// bound², not crowd².
func TestJoinLeaveBoundInAStorm(t *testing.T) {
	t.Parallel()
	const crowd, bound = 1500, 50
	n := startNodeMem(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("room", hub.NamespaceOptions{
			AllowSubscribeForClient: true, Presence: true, JoinLeave: true, ForcePushJoinLeave: true,
			JoinLeaveMaxSubscribers: bound,
		}),
	}}})
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan string, crowd)
	for i := range crowd {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := n.dial(t)
			c.Connect("u")
			c.Send(`{"id":2,"subscribe":{"channel":"room:lobby"}}`)
			// Joins of others may arrive before the reply: skip them.
			for {
				m := c.Next()
				if m["push"] != nil {
					continue
				}
				if m["subscribe"] == nil {
					errs <- "client " + string(rune('0'+i%10)) + ": subscribe failed"
				}
				return
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	took := time.Since(start)
	joins := counterValue(t, n.hub, "herald_client_messages_sent_total", "type", "join")
	suppressed := counterValue(t, n.hub, "herald_channel_join_leave_suppressed_total", "", "")
	t.Logf("%d clients joined in %v; %v join pushes, %v events suppressed", crowd, took, joins, suppressed)
	// Unbounded, the crowd would get crowd*(crowd-1)/2 ≈ 1.1M pushes.
	if limit := float64(4 * bound * bound); joins > limit {
		t.Fatalf("%v join pushes, want at most %v (bound %d)", joins, limit, bound)
	}
	if suppressed == 0 {
		t.Fatal("no join event suppressed above the bound")
	}
	if got := n.hub.Channels()["room:lobby"]; got != crowd {
		t.Fatalf("%d subscribers, want %d", got, crowd)
	}
}

// TestJoinLeaveBelowBound: under the bound join and leave are pushed as
// before, and -1 lifts the bound.
func TestJoinLeaveBelowBound(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("small", hub.NamespaceOptions{AllowSubscribeForClient: true, JoinLeave: true, ForcePushJoinLeave: true, JoinLeaveMaxSubscribers: 2}),
		ns("open", hub.NamespaceOptions{AllowSubscribeForClient: true, JoinLeave: true, ForcePushJoinLeave: true, JoinLeaveMaxSubscribers: -1}),
	}}})
	for _, tc := range []struct {
		ch        string
		wantThird bool
	}{{"small:x", false}, {"open:x", true}} {
		a := n.dial(t)
		a.Connect("a")
		a.MustSubscribe(2, tc.ch, "")
		b := n.dial(t)
		b.Connect("b")
		b.MustSubscribe(2, tc.ch, "")
		if p := jsonclient.PushesOf(a.Drain(), tc.ch, "join"); len(p) != 2 {
			t.Fatalf("%s: want a's own join and b's: %v", tc.ch, p)
		}
		c := n.dial(t)
		c.Connect("c")
		c.MustSubscribe(2, tc.ch, "")
		if p := jsonclient.PushesOf(a.Drain(), tc.ch, "join"); (len(p) == 1) != tc.wantThird {
			t.Fatalf("%s: join of the third subscriber pushed=%v, want %v", tc.ch, len(p) == 1, tc.wantThird)
		}
	}
}
