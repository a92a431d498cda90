package hub_test

import (
	"context"
	"testing"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// TestHandlersErrUseDefault: a handler that returns hub.ErrUseDefault
// leaves the command to the hub's own checks (token, namespace
// permissions), while the commands it decides keep its verdict.
func TestHandlersErrUseDefault(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Channels: hub.ChannelConfig{
			WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true, AllowPublishForSubscriber: true},
			Namespaces:       []hub.Namespace{{Name: "closed"}},
		},
		Handlers: hub.Handlers{
			OnConnecting: func(ctx context.Context, ev hub.ConnectEvent) (hub.ConnectReply, error) {
				if ev.Token != "" {
					return hub.ConnectReply{}, hub.ErrUseDefault
				}
				return hub.ConnectReply{User: "from-handler"}, nil
			},
			OnSubscribe: func(ctx context.Context, c *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
				if hub.ChannelNamespace(ev.Channel) == "" {
					return hub.SubscribeReply{}, hub.ErrUseDefault
				}
				return hub.SubscribeReply{Data: []byte(`{"by":"handler"}`)}, nil
			},
			OnPublish: func(ctx context.Context, c *hub.Client, ev hub.PublishEvent) (hub.PublishReply, error) {
				return hub.PublishReply{}, hub.ErrUseDefault
			},
		},
	})
	c := n.dial(t)
	if res := c.Connect("jwt-user"); res["client"] == nil {
		t.Fatalf("token connect with ErrUseDefault: %v", res)
	}
	// The namespace without options allows nothing; the handler decides.
	if res := c.MustSubscribe(2, "closed:a", ""); jsonclient.Compact(t, res["data"]) != `{"by":"handler"}` {
		t.Fatalf("subscribe decided by handler: %v", res)
	}
	// Without namespace: default permission applies.
	c.MustSubscribe(3, "open", "")
	if m := c.Call(`{"id":4,"publish":{"channel":"open","data":{}}}`); m["publish"] == nil {
		t.Fatalf("publish by default permission (subscriber): %v", m)
	}
	jsonclient.WantError(t, c.Call(`{"id":5,"publish":{"channel":"other","data":{}}}`), 103)

	c2 := n.dial(t)
	m := c2.ConnectWith(`{}`)
	if jsonclient.Path(m, "connect", "client") == nil {
		t.Fatalf("connect decided by handler: %v", m)
	}
	if ChannelNamespace := hub.ChannelNamespace("$ns:x#u"); ChannelNamespace != "ns" {
		t.Fatalf(`ChannelNamespace("$ns:x#u") = %q`, ChannelNamespace)
	}
}
