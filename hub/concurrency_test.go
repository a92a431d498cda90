package hub_test

import (
	"context"
	"slices"
	"testing"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// slowRPC answers the method "slow" when release is closed and every other
// method at once.
func slowRPC(release <-chan struct{}) hub.Handlers {
	return hub.Handlers{OnRPC: func(ctx context.Context, _ *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
		if ev.Method == "slow" {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		reply(hub.RPCReply{Data: []byte(`"` + ev.Method + `"`)}, nil)
	}}
}

// TestClientConcurrency: with client.concurrency above 1 a slow command
// holds up only itself: the commands behind it run and reply first, their
// replies matched by id; commands about one channel keep their order.
func TestClientConcurrency(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	cfg := hub.Config{
		Client:   hub.ClientConfig{Concurrency: 4},
		Handlers: slowRPC(release),
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true, AllowPublishForSubscriber: true}},
	}
	n := startNode(t, cfg)
	c := n.dial(t)
	c.Connect("alice")
	c.Send(`{"id":2,"rpc":{"method":"slow"}}` + "\n" + `{"id":3,"rpc":{"method":"fast"}}` + "\n" +
		`{"id":4,"subscribe":{"channel":"room"}}` + "\n" + `{"id":5,"publish":{"channel":"room","data":{"n":1}}}`)
	// The subscribe's reply comes before the publish's (the publish needs
	// the subscription), and all before the slow RPC's.
	var order []float64
	for len(order) < 3 {
		m := c.Next()
		if id, ok := m["id"].(float64); ok {
			if m["error"] != nil {
				t.Fatalf("reply %v: %v", id, m)
			}
			order = append(order, id)
		}
	}
	if i4, i5 := slices.Index(order, 4), slices.Index(order, 5); i4 < 0 || i5 < i4 || !slices.Contains(order, 3) {
		t.Fatalf("replies in order %v: want 3, 4 and 5, with 5 after 4, before 2", order)
	}
	close(release)
	for {
		m := c.Next()
		if m["id"] == float64(2) {
			if jsonclient.Path(m, "rpc", "data") != "slow" {
				t.Fatalf("slow rpc: %v", m)
			}
			break
		}
	}
}

// TestClientConcurrencyOff: by default commands run one after another, and
// a slow one holds up the ones behind it.
func TestClientConcurrencyOff(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	n := startNode(t, hub.Config{Handlers: slowRPC(release)})
	c := n.dial(t)
	c.Connect("alice")
	c.Send(`{"id":2,"rpc":{"method":"slow"}}` + "\n" + `{"id":3,"rpc":{"method":"fast"}}`)
	close(release)
	if m := c.Next(); m["id"] != float64(2) {
		t.Fatalf("first reply: want id 2, got %v", m)
	}
}
