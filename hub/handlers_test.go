package hub_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/transport/websocket"
)

// TestOnSubscribe: the handler decides instead of the namespace (which
// allows nothing here), may refuse with an error or a disconnect, and its
// reply's info, data and expiry reach the subscription.
func TestOnSubscribe(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{Presence: true, AllowPresenceForSubscriber: true}},
		Handlers: hub.Handlers{OnSubscribe: func(ctx context.Context, c *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
			switch ev.Channel {
			case "open":
				return hub.SubscribeReply{Info: []byte(`{"role":"guest"}`), Data: []byte(`{"welcome":"` + c.User() + `"}`)}, nil
			case "expiring":
				return hub.SubscribeReply{ExpireAt: time.Now().Add(time.Hour).Unix()}, nil
			case "close":
				return hub.SubscribeReply{}, &hub.Disconnect{Code: 4001, Reason: "go away"}
			}
			return hub.SubscribeReply{}, &hub.Error{Code: 403, Message: "not yours: " + string(ev.Data)}
		}},
	})
	c := n.dial(t)
	c.Connect("u")
	res := c.MustSubscribe(2, "open", "")
	if jsonclient.Compact(t, res["data"]) != `{"welcome":"u"}` {
		t.Fatalf("subscribe data from OnSubscribe: %v", res)
	}
	p := c.Call(`{"id":3,"presence":{"channel":"open"}}`)
	if !strings.Contains(jsonclient.Compact(t, p), `"chan_info":{"role":"guest"}`) {
		t.Fatalf("chan_info from OnSubscribe in presence: %v", p)
	}
	if res := c.MustSubscribe(4, "expiring", ""); res["expires"] != true || jsonclient.Num(res["ttl"]) < 3500 {
		t.Fatalf("expiry from OnSubscribe: %v", res)
	}
	m := c.Call(`{"id":5,"subscribe":{"channel":"secret","data":{"why":1}}}`)
	if jsonclient.Compact(t, m["error"]) != `{"code":403,"message":"not yours: {\"why\":1}"}` {
		t.Fatalf("refusal from OnSubscribe: %v", m)
	}
	c.Send(`{"id":6,"subscribe":{"channel":"close"}}`)
	c.ExpectClose(4001, "go away")
}

// TestOnPublish: the handler replaces the namespace permission, may
// rewrite the data, skip history, or refuse.
func TestOnPublish(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
			AllowSubscribeForClient: true, HistorySize: 10, HistoryTTL: time.Minute, AllowHistoryForSubscriber: true,
		}},
		Handlers: hub.Handlers{OnPublish: func(ctx context.Context, c *hub.Client, ev hub.PublishEvent) (hub.PublishReply, error) {
			switch {
			case bytes.Contains(ev.Data, []byte("spam")):
				return hub.PublishReply{}, &hub.Error{Code: 1001, Message: "spam refused"}
			case bytes.Contains(ev.Data, []byte("ephemeral")):
				return hub.PublishReply{SkipHistory: true}, nil
			}
			return hub.PublishReply{Data: []byte(`{"by":"` + c.User() + `","text":` + string(ev.Data) + `}`)}, nil
		}},
	})
	c := n.dial(t)
	c.Connect("ann")
	c.MustSubscribe(2, "room", "")
	if m := c.Call(`{"id":3,"publish":{"channel":"room","data":"hi"}}`); m["publish"] == nil {
		t.Fatalf("publish allowed by OnPublish: %v", m)
	}
	if pub := c.Next(); jsonclient.Compact(t, jsonclient.Path(pub, "push", "pub", "data")) != `{"by":"ann","text":"hi"}` {
		t.Fatalf("rewritten publication: %v", pub)
	}
	jsonclient.WantError(t, c.Call(`{"id":4,"publish":{"channel":"room","data":"spam"}}`), 1001)
	if m := c.Call(`{"id":5,"publish":{"channel":"room","data":"ephemeral"}}`); m["publish"] == nil {
		t.Fatalf("ephemeral publish: %v", m)
	}
	if pub := c.Next(); jsonclient.Compact(t, jsonclient.Path(pub, "push", "pub", "data")) != `"ephemeral"` {
		t.Fatalf("ephemeral publication: %v", pub)
	}
	h := c.Call(`{"id":6,"history":{"channel":"room","limit":10}}`)
	if pubs := jsonclient.Path(h, "history", "publications").([]any); len(pubs) != 1 {
		t.Fatalf("history keeps the rewritten publication only, not the ephemeral one: %v", h)
	}
}

// TestOnPresenceAndOnHistory: both replace the namespace permission (none
// here) but not the namespace's switch for the feature.
func TestOnPresenceAndOnHistory(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	record := func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() }
	n := startNode(t, hub.Config{
		Channels: hub.ChannelConfig{
			WithoutNamespace: hub.NamespaceOptions{Presence: true, HistorySize: 10, HistoryTTL: time.Minute},
			Namespaces:       []hub.Namespace{{Name: "bare"}},
		},
		Handlers: hub.Handlers{
			OnPresence: func(ctx context.Context, c *hub.Client, ev hub.PresenceEvent) error {
				record("presence " + ev.Channel + " " + strconv.FormatBool(ev.Stats))
				if ev.Channel == "private" {
					return &hub.Error{Code: 103, Message: "permission denied"}
				}
				return nil
			},
			OnHistory: func(ctx context.Context, c *hub.Client, ev hub.HistoryEvent) error {
				record("history " + ev.Channel + " " + strconv.Itoa(ev.Limit))
				if ev.Channel == "private" {
					return &hub.Disconnect{Code: 4002, Reason: "no"}
				}
				return nil
			},
		},
	})
	c := n.dial(t)
	c.Connect("u")
	if m := c.Call(`{"id":2,"presence":{"channel":"public"}}`); m["presence"] == nil {
		t.Fatalf("presence allowed by OnPresence: %v", m)
	}
	if m := c.Call(`{"id":3,"presence_stats":{"channel":"public"}}`); m["presence_stats"] == nil {
		t.Fatalf("presence_stats allowed by OnPresence: %v", m)
	}
	jsonclient.WantError(t, c.Call(`{"id":4,"presence":{"channel":"private"}}`), 103)
	jsonclient.WantError(t, c.Call(`{"id":5,"presence":{"channel":"bare:x"}}`), 108) // presence off there
	if m := c.Call(`{"id":6,"history":{"channel":"public","limit":3}}`); m["history"] == nil {
		t.Fatalf("history allowed by OnHistory: %v", m)
	}
	jsonclient.WantError(t, c.Call(`{"id":7,"history":{"channel":"bare:x"}}`), 108) // history off there
	c.Send(`{"id":8,"history":{"channel":"private"}}`)
	c.ExpectClose(4002, "no")
	want := []string{"presence public false", "presence public true", "presence private false", "history public 3", "history private 0"}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("handler calls %q, want %q", got, want)
	}
}

// TestOnRefreshAndOnSubRefresh: both renew without tokens, may expire the
// connection or subscription, and update its info.
func TestOnRefreshAndOnSubRefresh(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true}},
		Handlers: hub.Handlers{
			OnRefresh: func(ctx context.Context, c *hub.Client, ev hub.RefreshEvent) (hub.RefreshReply, error) {
				if ev.Token == "end" {
					return hub.RefreshReply{Expired: true}, nil
				}
				return hub.RefreshReply{ExpireAt: time.Now().Add(time.Hour).Unix()}, nil
			},
			OnSubRefresh: func(ctx context.Context, c *hub.Client, ev hub.SubRefreshEvent) (hub.SubRefreshReply, error) {
				if ev.Token == "end" {
					return hub.SubRefreshReply{Expired: true}, nil
				}
				return hub.SubRefreshReply{ExpireAt: time.Now().Add(time.Minute).Unix()}, nil
			},
		},
	})
	c := n.dial(t)
	c.Connect("u")
	if m := c.Call(`{"id":2,"refresh":{"token":"anything"}}`); jsonclient.Path(m, "refresh", "expires") != true || jsonclient.Num(jsonclient.Path(m, "refresh", "ttl")) < 3500 {
		t.Fatalf("refresh from OnRefresh: %v", m)
	}
	c.MustSubscribe(3, "ch", "")
	if m := c.Call(`{"id":4,"sub_refresh":{"channel":"ch","token":"x"}}`); jsonclient.Path(m, "sub_refresh", "expires") != true {
		t.Fatalf("sub_refresh from OnSubRefresh: %v", m)
	}
	// An expired subscription is unsubscribed with 2501 (the reply to
	// the sub_refresh is not sent, as for a subscription that expired).
	c.Send(`{"id":5,"sub_refresh":{"channel":"ch","token":"end"}}`)
	if m := c.Next(); jsonclient.Path(m, "push", "unsubscribe", "code") == nil || jsonclient.Num(jsonclient.Path(m, "push", "unsubscribe", "code")) != 2501 {
		t.Fatalf("unsubscribe push after OnSubRefresh expired it: %v", m)
	}
	c.Send(`{"id":6,"refresh":{"token":"end"}}`)
	c.ExpectClose(3005, "connection expired")
}

// TestOnConnectAndSendToUser: OnConnect sees connected clients, and
// SendToUser reaches every connection of a user (or one of them).
func TestOnConnectAndSendToUser(t *testing.T) {
	t.Parallel()
	connected := make(chan string, 4)
	n := startNode(t, hub.Config{Handlers: hub.Handlers{OnConnect: func(c *hub.Client) { connected <- c.User() + " " + c.ID() }}})
	a1, a2, b := n.dial(t), n.dial(t), n.dial(t)
	id1 := a1.Connect("alice")["client"].(string)
	a2.Connect("alice")
	b.Connect("bob")
	seen := map[string]bool{}
	for range 3 {
		seen[strings.Fields(<-connected)[0]] = true
	}
	if !seen["alice"] || !seen["bob"] {
		t.Fatalf("OnConnect saw %v", seen)
	}
	if err := n.hub.SendToUser(t.Context(), "alice", "", []byte(`{"to":"all of alice"}`)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*rawClient{a1, a2} {
		if m := c.Next(); jsonclient.Compact(t, jsonclient.Path(m, "push", "message", "data")) != `{"to":"all of alice"}` {
			t.Fatalf("message to alice: %v", m)
		}
	}
	if err := n.hub.SendToUser(t.Context(), "alice", id1, []byte(`{"to":"one"}`)); err != nil {
		t.Fatal(err)
	}
	if m := a1.Next(); jsonclient.Compact(t, jsonclient.Path(m, "push", "message", "data")) != `{"to":"one"}` {
		t.Fatalf("message to one connection: %v", m)
	}
	for _, c := range []*rawClient{a2, b} {
		if msgs := c.Drain(); len(msgs) != 0 {
			t.Fatalf("a message for another connection arrived: %v", msgs)
		}
	}
}

// TestCommandTimeout: a handler that outlasts client.command_timeout
// answers error 100 and the client stays connected; its context ends when
// the timeout passes, and when the client goes away.
func TestCommandTimeout(t *testing.T) {
	t.Parallel()
	ended := make(chan error, 2)
	started := make(chan struct{}, 4)
	n := startNode(t, hub.Config{
		Client: hub.ClientConfig{CommandTimeout: 200 * time.Millisecond},
		Handlers: hub.Handlers{OnRPC: func(ctx context.Context, c *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
			if ev.Method == "never" {
				// Never replies: the hub stops waiting at the timeout.
				go func() { <-ctx.Done(); ended <- ctx.Err() }()
				return
			}
			started <- struct{}{}
			<-ctx.Done()
			ended <- ctx.Err()
			reply(hub.RPCReply{}, ctx.Err())
		}},
	})
	c := n.dial(t)
	c.Connect("u")
	start := time.Now()
	jsonclient.WantError(t, c.Call(`{"id":2,"rpc":{"method":"wait"}}`), 100)
	if err := <-ended; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("handler context ended with %v, want the deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("timed out after %v, want about 200ms", d)
	}
	jsonclient.WantError(t, c.Call(`{"id":3,"rpc":{"method":"never"}}`), 100)
	<-ended
	if m := c.Call(`{"id":4,"presence_stats":{"channel":"x"}}`); jsonclient.ErrorCode(m) != 108 {
		t.Fatalf("client after timeouts: %v", m)
	}

	// A command in progress is cancelled when its client goes away.
	d := n.dial(t)
	d.Connect("v")
	d.Send(`{"id":2,"rpc":{"method":"wait"}}`)
	<-started // the first call's
	<-started
	d.Drop()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("handler context of a closed client ended with %v, want cancelled", err)
		}
	case <-time.After(150 * time.Millisecond):
		t.Fatal("handler context not cancelled when its client went away")
	}
}

// TestQueuePolicyDropOldest: a subscriber of a drop_oldest namespace that
// stops reading loses its oldest queued publications instead of its
// connection, the application hears of it, and the latest publication
// arrives once it reads again.
func TestQueuePolicyDropOldest(t *testing.T) {
	t.Parallel()
	events := make(chan hub.BackpressureEvent, 64)
	n := startNodeWS(t, hub.Config{
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{{Name: "tick", NamespaceOptions: hub.NamespaceOptions{
			AllowSubscribeForClient: true, QueuePolicy: hub.QueueDropOldest,
		}}}},
		Client: hub.ClientConfig{QueueMaxSize: 64 << 10},
		Handlers: hub.Handlers{OnBackpressure: func(c *hub.Client, ev hub.BackpressureEvent) {
			select {
			case events <- ev:
			default:
			}
		}},
	}, websocket.Config{WriteTimeout: 10 * time.Second})
	slow := n.dialDialer(t, smallReceiveBuffer(), nil)
	slow.Connect("slow")
	slow.MustSubscribe(2, "tick:price", "")
	payload := `"` + strings.Repeat("x", 2000) + `"`
	var ev hub.BackpressureEvent
	for i := 0; ev.Dropped == 0; i++ {
		if i == 5000 {
			t.Fatal("5000 publications to a reader that stopped and no drop")
		}
		if _, err := n.hub.Publish(t.Context(), "tick:price", []byte(`{"i":`+strconv.Itoa(i)+`,"pad":`+payload+`}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case ev = <-events:
		default:
		}
	}
	if ev.Closed || ev.Limit != 64<<10 || ev.QueuedBytes <= ev.Limit {
		t.Fatalf("backpressure event %+v", ev)
	}
	if _, err := n.hub.Publish(t.Context(), "tick:price", []byte(`{"last":true}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	// Reading again, the client finds the latest publication and is still
	// connected.
	for {
		m := slow.Next()
		if jsonclient.Compact(t, jsonclient.Path(m, "push", "pub", "data")) == `{"last":true}` {
			break
		}
	}
	if m := slow.Call(`{"id":3,"presence_stats":{"channel":"tick:price"}}`); jsonclient.ErrorCode(m) != 108 {
		t.Fatalf("slow client after drops: %v", m)
	}
}

// TestPublishTokenAuthStillWorksWithHandlers guards the default path: with
// only OnRPC set, subscription tokens and namespace rules decide as before.
func TestPublishTokenAuthStillWorksWithHandlers(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Handlers: hub.Handlers{OnRPC: func(ctx context.Context, c *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
		reply(hub.RPCReply{}, nil)
	}}})
	c := n.dial(t)
	c.Connect("u")
	jsonclient.WantError(t, c.Call(`{"id":2,"subscribe":{"channel":"room"}}`), 103)
	tok := subToken(t, auth.SubscribeClaims{User: "u", Channel: "room"})
	c.MustSubscribe(3, "room", `"token":"`+tok+`"`)
}

// TestPublishExceptClient: a publication may skip one connection; a
// positioned subscription of that connection does not take the skipped
// offset for a gap.
func TestPublishExceptClient(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
		AllowSubscribeForClient: true, HistorySize: 10, HistoryTTL: time.Minute, ForceRecovery: true,
	}}})
	sender, other := n.dial(t), n.dial(t)
	senderID := sender.Connect("s")["client"].(string)
	other.Connect("o")
	sender.MustSubscribe(2, "chat", "")
	other.MustSubscribe(2, "chat", "")
	if _, err := n.hub.Publish(t.Context(), "chat", []byte(`{"n":1}`), hub.PublishOptions{ExceptClient: senderID}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.hub.Publish(t.Context(), "chat", []byte(`{"n":2}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"n":1}`, `{"n":2}`} {
		if m := other.Next(); jsonclient.Compact(t, jsonclient.Path(m, "push", "pub", "data")) != want {
			t.Fatalf("other got %v, want %s", m, want)
		}
	}
	if m := sender.Next(); jsonclient.Compact(t, jsonclient.Path(m, "push", "pub", "data")) != `{"n":2}` || jsonclient.Num(jsonclient.Path(m, "push", "pub", "offset")) != 2 {
		t.Fatalf("sender got %v, want only the second publication (offset 2), and no unsubscribe for a gap", m)
	}
	if msgs := sender.Drain(); len(msgs) != 0 {
		t.Fatalf("sender got more: %v", msgs)
	}
}
