package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// TestServerSideRefresh: a connection whose connect reply asks for
// server-side refresh is told no expiry, and at its expiry the hub asks
// OnRefresh itself: a new expiry keeps it (with the new info), expired
// closes it with 3005.
func TestServerSideRefresh(t *testing.T) {
	t.Parallel()
	refreshed := make(chan hub.RefreshEvent, 4)
	n := startNode(t, hub.Config{Handlers: hub.Handlers{
		OnConnecting: func(ctx context.Context, ev hub.ConnectEvent) (hub.ConnectReply, error) {
			return hub.ConnectReply{User: string(ev.Data[1 : len(ev.Data)-1]), ExpireAt: time.Now().Unix() + 1, ServerSideRefresh: true}, nil
		},
		OnRefresh: func(ctx context.Context, c *hub.Client, ev hub.RefreshEvent) (hub.RefreshReply, error) {
			refreshed <- ev
			if c.User() == "keep" {
				return hub.RefreshReply{ExpireAt: time.Now().Add(time.Hour).Unix(), Info: []byte(`{"renewed":true}`)}, nil
			}
			return hub.RefreshReply{Expired: true}, nil
		},
		OnRPC: func(ctx context.Context, c *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
			reply(hub.RPCReply{Data: c.Info()}, nil)
		},
	}})
	keep := n.dial(t)
	res := keep.ConnectWith(`{"data":"keep"}`)["connect"].(map[string]any)
	if res["expires"] != nil || res["ttl"] != nil {
		t.Fatalf("a server-side refreshed connection was told its expiry: %v", res)
	}
	if ev := recv(t, refreshed, "server-side refresh"); !ev.ServerSide || ev.Token != "" {
		t.Fatalf("refresh event %+v", ev)
	}
	// Still connected, with the info from the refresh (the rpc runs after
	// the refresh on the client's command goroutine).
	if m := keep.Call(`{"id":2,"rpc":{"method":"info"}}`); jsonclient.Compact(t, m["rpc"]) != `{"data":{"renewed":true}}` {
		t.Fatalf("after the server-side refresh: %v", m)
	}

	gone := n.dial(t)
	gone.ConnectWith(`{"data":"gone"}`)
	recv(t, refreshed, "server-side refresh")
	gone.ExpectClose(3005, "connection expired")
}

// TestSubServerSideRefresh: the same for subscriptions: the subscribe
// result carries no expiry, OnSubRefresh is asked at expiry, and expired
// unsubscribes with 2501.
func TestSubServerSideRefresh(t *testing.T) {
	t.Parallel()
	refreshed := make(chan hub.SubRefreshEvent, 4)
	n := startNode(t, hub.Config{Handlers: hub.Handlers{
		OnSubscribe: func(ctx context.Context, c *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
			return hub.SubscribeReply{ExpireAt: time.Now().Unix() + 1, ServerSideRefresh: true}, nil
		},
		OnSubRefresh: func(ctx context.Context, c *hub.Client, ev hub.SubRefreshEvent) (hub.SubRefreshReply, error) {
			refreshed <- ev
			if ev.Channel == "keep" {
				return hub.SubRefreshReply{ExpireAt: time.Now().Add(time.Hour).Unix()}, nil
			}
			return hub.SubRefreshReply{Expired: true}, nil
		},
	}})
	c := n.dial(t)
	c.Connect("u")
	if res := c.MustSubscribe(2, "keep", ""); res["expires"] != nil {
		t.Fatalf("a server-side refreshed subscription was told its expiry: %v", res)
	}
	if ev := recv(t, refreshed, "server-side sub refresh"); !ev.ServerSide || ev.Channel != "keep" {
		t.Fatalf("sub refresh event %+v", ev)
	}
	c.MustSubscribe(3, "gone", "")
	if ev := recv(t, refreshed, "server-side sub refresh"); ev.Channel != "gone" {
		t.Fatalf("sub refresh event %+v", ev)
	}
	for {
		m := c.Next()
		if p, ok := m["push"].(map[string]any); ok && p["unsubscribe"] != nil {
			if p["channel"] != "gone" || jsonclient.Num(p["unsubscribe"].(map[string]any)["code"]) != 2501 {
				t.Fatalf("unsubscribe push %v", p)
			}
			break
		}
	}
	// keep is still there: subscribing again is 105 (already subscribed).
	jsonclient.WantError(t, c.Subscribe(4, "keep", ""), 105)
}
