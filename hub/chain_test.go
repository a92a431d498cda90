package hub_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// TestChain: handlers are asked in order, ErrUseDefault passes a command
// on, the first other answer decides (a later handler never overrides an
// earlier refusal), passing through every handler reaches the hub's
// defaults, and notifications reach every handler.
func TestChain(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		calls []string
	)
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, s)
	}
	var secondAsked atomic.Int32
	first := hub.Handlers{
		OnSubscribe: func(ctx context.Context, c *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
			switch ev.Channel {
			case "first_yes":
				return hub.SubscribeReply{Data: []byte(`"first"`)}, nil
			case "first_no":
				return hub.SubscribeReply{}, &hub.Error{Code: 403, Message: "first refuses"}
			}
			return hub.SubscribeReply{}, hub.ErrUseDefault
		},
		OnPresence: func(context.Context, *hub.Client, hub.PresenceEvent) error { return hub.ErrUseDefault },
		OnHistory:  func(context.Context, *hub.Client, hub.HistoryEvent) error { return hub.ErrUseDefault },
		OnRPC: func(ctx context.Context, c *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
			if ev.Method == "first" {
				reply(hub.RPCReply{Data: []byte(`"from first"`)}, nil)
				return
			}
			// Passed on later, from another goroutine.
			go reply(hub.RPCReply{}, hub.ErrUseDefault)
		},
		OnSend:       func(context.Context, *hub.Client, hub.SendEvent) error { return hub.ErrUseDefault },
		OnConnect:    func(*hub.Client) { record("connect first") },
		OnDisconnect: func(*hub.Client, hub.DisconnectEvent) { record("disconnect first") },
	}
	disconnected := make(chan struct{})
	second := hub.Handlers{
		OnSubscribe: func(ctx context.Context, c *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
			secondAsked.Add(1)
			if ev.Channel == "to_default" {
				return hub.SubscribeReply{}, hub.ErrUseDefault
			}
			return hub.SubscribeReply{Data: []byte(`"second"`)}, nil
		},
		OnRPC: func(ctx context.Context, c *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
			if ev.Method == "second" {
				reply(hub.RPCReply{Data: []byte(`"from second"`)}, nil)
				return
			}
			reply(hub.RPCReply{}, hub.ErrUseDefault)
		},
		OnConnect: func(*hub.Client) { record("connect second") },
		OnDisconnect: func(*hub.Client, hub.DisconnectEvent) {
			record("disconnect second")
			close(disconnected)
		},
	}
	n := startNode(t, hub.Config{
		// The namespace allows presence and history to subscribers, and
		// no subscription: what the handlers pass on is refused.
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			Presence: true, AllowPresenceForSubscriber: true,
			HistorySize: 10, HistoryTTL: time.Minute, AllowHistoryForSubscriber: true,
		}},
		Handlers: hub.Chain(first, hub.Handlers{}, second),
	})
	c := n.dial(t)
	c.Connect("u")

	if res := c.MustSubscribe(2, "first_yes", ""); jsonclient.Compact(t, res["data"]) != `"first"` {
		t.Fatalf("decided by the first handler: %v", res)
	}
	if m := c.Subscribe(3, "first_no", ""); jsonclient.Compact(t, m["error"]) != `{"code":403,"message":"first refuses"}` {
		t.Fatalf("refused by the first handler: %v", m)
	}
	if got := secondAsked.Load(); got != 0 {
		t.Fatalf("the second handler was asked %d times about what the first decided", got)
	}
	if res := c.MustSubscribe(4, "other", ""); jsonclient.Compact(t, res["data"]) != `"second"` {
		t.Fatalf("passed on to the second handler: %v", res)
	}
	jsonclient.WantError(t, c.Subscribe(5, "to_default", ""), 103)

	// OnPresence and OnHistory pass: the namespace's permissions decide.
	if m := c.Call(`{"id":6,"presence":{"channel":"other"}}`); m["presence"] == nil {
		t.Fatalf("presence for a subscriber, by the namespace: %v", m)
	}
	jsonclient.WantError(t, c.Call(`{"id":7,"presence":{"channel":"to_default"}}`), 103)
	if m := c.Call(`{"id":11,"history":{"channel":"other"}}`); m["history"] == nil {
		t.Fatalf("history for a subscriber, by the namespace: %v", m)
	}
	jsonclient.WantError(t, c.Call(`{"id":12,"history":{"channel":"to_default"}}`), 103)

	if m := c.Call(`{"id":8,"rpc":{"method":"first"}}`); jsonclient.Compact(t, jsonclient.Path(m, "rpc", "data")) != `"from first"` {
		t.Fatalf("rpc answered by the first handler: %v", m)
	}
	if m := c.Call(`{"id":9,"rpc":{"method":"second"}}`); jsonclient.Compact(t, jsonclient.Path(m, "rpc", "data")) != `"from second"` {
		t.Fatalf("rpc passed on to the second handler: %v", m)
	}
	jsonclient.WantError(t, c.Call(`{"id":10,"rpc":{"method":"nobody"}}`), 108)

	// A send every handler passes on closes the connection, as without
	// OnSend.
	c.Send(`{"send":{"data":{}}}`)
	c.ExpectClose(3508, "")
	recv(t, disconnected, "OnDisconnect of the second handler")
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"connect first", "connect second", "disconnect first", "disconnect second"}; !slices.Equal(calls, want) {
		t.Fatalf("notifications: %s, want %s", strings.Join(calls, ", "), strings.Join(want, ", "))
	}
}

// TestChainNothing: chaining sets without a handler leaves the field nil,
// so the hub keeps its defaults (and its fast paths).
func TestChainNothing(t *testing.T) {
	h := hub.Chain(hub.Handlers{}, hub.Handlers{OnConnect: func(*hub.Client) {}})
	if h.OnConnecting != nil || h.OnSubscribe != nil || h.OnRPC != nil || h.OnSend != nil || h.OnDisconnect != nil || h.OnBackpressure != nil {
		t.Fatal("Chain set a handler no set has")
	}
	if h.OnConnect == nil {
		t.Fatal("Chain dropped the one OnConnect")
	}
	if h := hub.Chain(); h.OnPublish != nil || h.OnHistory != nil {
		t.Fatal("Chain of nothing has handlers")
	}
}

// An application decides subscriptions to its own namespace and chains
// a second set of handlers (a proxy, say) for the others; what neither
// decides goes to the hub's namespace options.
func ExampleChain() {
	app := hub.Handlers{OnSubscribe: func(ctx context.Context, c *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
		if hub.ChannelNamespace(ev.Channel) != "app" {
			return hub.SubscribeReply{}, hub.ErrUseDefault
		}
		return hub.SubscribeReply{Data: []byte(`"welcome"`)}, nil
	}}
	backend := hub.Handlers{OnSubscribe: func(ctx context.Context, c *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
		if hub.ChannelNamespace(ev.Channel) != "orders" {
			return hub.SubscribeReply{}, hub.ErrUseDefault
		}
		return hub.SubscribeReply{}, &hub.Error{Code: 403, Message: "not your order"}
	}}
	handlers := hub.Chain(app, backend)

	for _, ch := range []string{"app:lobby", "orders:42", "news"} {
		r, err := handlers.OnSubscribe(context.Background(), nil, hub.SubscribeEvent{Channel: ch})
		fmt.Printf("%s: %s %v\n", ch, r.Data, err)
	}
	// Output:
	// app:lobby: "welcome" <nil>
	// orders:42:  error 403: not your order
	// news:  hub: use the default decision
}
