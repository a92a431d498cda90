package hub_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/protocol"
)

func apiConfig() hub.Config {
	return hub.Config{
		Name: "node-a", Version: "7.0.0",
		Client: hub.ClientConfig{HistoryMaxPublicationLimit: 2},
		Channels: hub.ChannelConfig{
			WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true, Presence: true},
			Namespaces: []hub.Namespace{ns("hist", hub.NamespaceOptions{
				AllowSubscribeForClient: true, HistorySize: 10, HistoryTTL: time.Minute,
			})},
		},
	}
}

// wantHubError checks that err is a *hub.Error with code.
func wantHubError(t *testing.T, err error, code protocol.ErrorCode) {
	t.Helper()
	var e *hub.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("want *hub.Error %d, got %v", code, err)
	}
}

func TestAPIPublish(t *testing.T) {
	t.Parallel()
	n := startNode(t, apiConfig())
	ctx := context.Background()
	c := n.dial(t)
	c.Connect("u")
	c.MustSubscribe(2, "hist:a", "")
	c.MustSubscribe(3, "plain", "")

	sp, err := n.hub.Publish(ctx, "hist:a", []byte(`{"n":1}`), hub.PublishOptions{
		Tags: map[string]string{"k": "v"},
		Info: &engine.ClientInfo{User: "srv", Client: "c0"},
	})
	if err != nil || sp.Offset != 1 || sp.Epoch == "" {
		t.Fatalf("publish: %+v %v", sp, err)
	}
	skip, err := n.hub.Publish(ctx, "hist:a", []byte(`{"n":2}`), hub.PublishOptions{SkipHistory: true})
	if err != nil || skip.Offset != 0 {
		t.Fatalf("publish skipping history: %+v %v", skip, err)
	}
	plain, err := n.hub.Publish(ctx, "plain", []byte(`{"n":3}`), hub.PublishOptions{})
	if err != nil || plain != (engine.StreamPosition{}) {
		t.Fatalf("publish without history: %+v %v", plain, err)
	}
	msgs := c.Drain()
	pubs := jsonclient.PushesOf(msgs, "hist:a", "pub")
	if len(pubs) != 2 {
		t.Fatalf("publications: %v", msgs)
	}
	if jsonclient.Compact(t, pubs[0]) != `{"data":{"n":1},"info":{"client":"c0","user":"srv"},"offset":1,"tags":{"k":"v"}}` {
		t.Fatalf("tagged publication: %v", pubs[0])
	}
	if jsonclient.Compact(t, pubs[1]) != `{"data":{"n":2}}` {
		t.Fatalf("publication skipping history: %v", pubs[1])
	}
	if p := jsonclient.PushesOf(msgs, "plain", "pub"); len(p) != 1 {
		t.Fatalf("plain publication: %v", msgs)
	}
	pubsH, top, err := n.hub.History(ctx, "hist:a", nil, -1, false)
	if err != nil || len(pubsH) != 1 || top.Offset != 1 {
		t.Fatalf("history after a skipped publication: %d pubs, %+v, %v", len(pubsH), top, err)
	}
	if pubsH[0].Tags["k"] != "v" || pubsH[0].Info.User != "srv" {
		t.Fatalf("stored publication: %+v", pubsH[0])
	}

	_, err = n.hub.Publish(ctx, "nope:a", []byte(`{}`), hub.PublishOptions{})
	wantHubError(t, err, 102)
	_, err = n.hub.Publish(ctx, "", []byte(`{}`), hub.PublishOptions{})
	wantHubError(t, err, 107)
}

func TestAPIHistory(t *testing.T) {
	t.Parallel()
	n := startNode(t, apiConfig())
	ctx := context.Background()
	sp := publishN(t, n.hub, "hist:a", 5)

	offsets := func(pubs []*engine.Publication) string {
		var o []uint64
		for _, p := range pubs {
			o = append(o, p.Offset)
		}
		return fmt.Sprint(o)
	}
	for _, tc := range []struct {
		since   *engine.StreamPosition
		limit   int
		reverse bool
		want    string
	}{
		{nil, 0, false, "[]"},
		{nil, -1, false, "[1 2 3 4 5]"}, // the client cap does not apply
		{nil, 2, true, "[5 4]"},
		{&engine.StreamPosition{Offset: 3, Epoch: sp.Epoch}, -1, false, "[4 5]"},
		{&engine.StreamPosition{Offset: 3}, -1, true, "[2 1]"},
	} {
		pubs, top, err := n.hub.History(ctx, "hist:a", tc.since, tc.limit, tc.reverse)
		if err != nil || top != sp || offsets(pubs) != tc.want {
			t.Fatalf("History(%+v, %d, %v) = %s %+v %v, want %s", tc.since, tc.limit, tc.reverse, offsets(pubs), top, err, tc.want)
		}
	}
	_, _, err := n.hub.History(ctx, "hist:a", &engine.StreamPosition{Offset: 1, Epoch: "other"}, -1, false)
	wantHubError(t, err, 112)
	_, _, err = n.hub.History(ctx, "hist:a", &engine.StreamPosition{Offset: 0}, -1, true)
	wantHubError(t, err, 107)
	_, _, err = n.hub.History(ctx, "plain", nil, -1, false)
	wantHubError(t, err, 108)
	_, _, err = n.hub.History(ctx, "nope:x", nil, -1, false)
	wantHubError(t, err, 102)

	t.Run("RemoveHistory keeps the position", func(t *testing.T) {
		if err := n.hub.RemoveHistory(ctx, "hist:a"); err != nil {
			t.Fatal(err)
		}
		pubs, top, err := n.hub.History(ctx, "hist:a", nil, -1, false)
		if err != nil || len(pubs) != 0 || top != sp {
			t.Fatalf("after RemoveHistory: %d pubs, %+v, %v", len(pubs), top, err)
		}
		next := publishN(t, n.hub, "hist:a", 1)
		if next.Offset != 6 || next.Epoch != sp.Epoch {
			t.Fatalf("publication after RemoveHistory: %+v", next)
		}
		wantHubError(t, n.hub.RemoveHistory(ctx, "plain"), 108)
	})
}

func TestAPIPresence(t *testing.T) {
	t.Parallel()
	n := startNode(t, apiConfig())
	ctx := context.Background()
	var ids []string
	for _, u := range []string{"u1", "u1", "u2"} {
		c := n.dial(t)
		ids = append(ids, c.Connect(u)["client"].(string))
		c.MustSubscribe(2, "room", "")
	}
	pres, err := n.hub.Presence(ctx, "room")
	if err != nil || len(pres) != 3 {
		t.Fatalf("presence: %v %v", pres, err)
	}
	for i, id := range ids {
		if pres[id] == nil || pres[id].Client != id || pres[id].User != []string{"u1", "u1", "u2"}[i] {
			t.Fatalf("presence[%s] = %+v", id, pres[id])
		}
	}
	st, err := n.hub.PresenceStats(ctx, "room")
	if err != nil || st != (engine.PresenceStats{NumClients: 3, NumUsers: 2}) {
		t.Fatalf("presence stats: %+v %v", st, err)
	}
	_, err = n.hub.Presence(ctx, "hist:a")
	wantHubError(t, err, 108)
	_, err = n.hub.PresenceStats(ctx, "hist:a")
	wantHubError(t, err, 108)
}

func TestAPIDisconnectUser(t *testing.T) {
	t.Parallel()
	cfg := apiConfig()
	gone := newDisconnects()
	cfg.Handlers.OnDisconnect = gone.handler
	n := startNode(t, cfg)
	ctx := context.Background()
	var xs []*rawClient
	var ids []string
	for range 3 {
		c := n.dial(t)
		ids = append(ids, c.Connect("x")["client"].(string))
		xs = append(xs, c)
	}
	y := n.dial(t)
	y.Connect("y")

	if err := n.hub.DisconnectUser(ctx, "x", "", []string{ids[2]}, 4001, "kicked"); err != nil {
		t.Fatal(err)
	}
	xs[0].ExpectClose(4001, "kicked")
	xs[1].ExpectClose(4001, "kicked")
	for _, c := range []*rawClient{xs[2], y} {
		if m := c.Call(`{"id":2,"rpc":{}}`); jsonclient.ErrorCode(m) != 108 {
			t.Fatalf("client spared by DisconnectUser: %v", m)
		}
	}
	gone.await(t, ids[0], ids[1])
	if got := n.hub.NumClients(); got != 2 {
		t.Fatalf("%d clients after disconnecting two of four", got)
	}

	if err := n.hub.DisconnectUser(ctx, "x", ids[2], nil, 4502, "only you"); err != nil {
		t.Fatal(err)
	}
	xs[2].ExpectClose(4502, "only you")
	if m := y.Call(`{"id":3,"rpc":{}}`); jsonclient.ErrorCode(m) != 108 {
		t.Fatalf("other user after DisconnectUser: %v", m)
	}
}

func TestAPIUnsubscribeUser(t *testing.T) {
	t.Parallel()
	n := startNode(t, apiConfig())
	ctx := context.Background()
	var xs []*rawClient
	var ids []string
	for range 2 {
		c := n.dial(t)
		ids = append(ids, c.Connect("x")["client"].(string))
		c.MustSubscribe(2, "a", "")
		c.MustSubscribe(3, "b", "")
		xs = append(xs, c)
	}
	y := n.dial(t)
	y.Connect("y")
	y.MustSubscribe(2, "a", "")

	const unsubA = `{"push":{"channel":"a","unsubscribe":{"code":2000,"reason":"server unsubscribe"}}}`
	if err := n.hub.UnsubscribeUser(ctx, "x", "a", ""); err != nil {
		t.Fatal(err)
	}
	for _, c := range xs {
		if m := c.Next(); jsonclient.Compact(t, m) != unsubA {
			t.Fatalf("want %s, got %v", unsubA, m)
		}
	}
	testenv.Eventually(t, "x out of a", 5*time.Second, func() bool { return n.hub.Channels()["a"] == 1 })
	publishN(t, n.hub, "a", 1)
	publishN(t, n.hub, "b", 1)
	for _, c := range xs {
		msgs := c.Drain()
		if len(jsonclient.PushesOf(msgs, "a", "pub")) != 0 || len(jsonclient.PushesOf(msgs, "b", "pub")) != 1 {
			t.Fatalf("after unsubscribe from a: %v", msgs)
		}
	}
	if p := jsonclient.PushesOf(y.Drain(), "a", "pub"); len(p) != 1 {
		t.Fatalf("other user's subscription: %v", p)
	}

	if err := n.hub.UnsubscribeUser(ctx, "x", "b", ids[0]); err != nil {
		t.Fatal(err)
	}
	if m := xs[0].Next(); jsonclient.Path(m, "push", "unsubscribe", "code") != float64(2000) || jsonclient.Path(m, "push", "channel") != "b" {
		t.Fatalf("client-specific unsubscribe: %v", m)
	}
	testenv.Eventually(t, "one client left in b", 5*time.Second, func() bool { return n.hub.Channels()["b"] == 1 })
	if msgs := xs[1].Drain(); len(msgs) != 0 {
		t.Fatalf("the other connection of x: %v", msgs)
	}
}

func TestAPINodesAndCounts(t *testing.T) {
	t.Parallel()
	n := startNode(t, apiConfig())
	for i, u := range []string{"u1", "u1", "u2"} {
		c := n.dial(t)
		c.Connect(u)
		c.MustSubscribe(2, "room", "")
		if i == 0 {
			c.MustSubscribe(3, "hist:a", "")
		}
	}
	n.dial(t) // not connected: not counted
	testenv.Eventually(t, "counts", 5*time.Second, func() bool {
		return n.hub.NumClients() == 3 && n.hub.NumUsers() == 2 && n.hub.NumChannels() == 2 && n.hub.NumSubscriptions() == 4
	})
	if ch := n.hub.Channels(); len(ch) != 2 || ch["room"] != 3 || ch["hist:a"] != 1 {
		t.Fatalf("channels: %v", ch)
	}
	nodes := n.hub.Nodes()
	if len(nodes) != 1 {
		t.Fatalf("nodes: %+v", nodes)
	}
	want := hub.NodeInfo{ID: n.hub.NodeID(), Name: "node-a", Version: "7.0.0", NumClients: 3, NumUsers: 2, NumChannels: 2, NumSubs: 4, Uptime: nodes[0].Uptime, CPU: nodes[0].CPU, Memory: nodes[0].Memory, Publications: nodes[0].Publications}
	if nodes[0] != want || nodes[0].Uptime < 0 || nodes[0].Uptime > 60 || nodes[0].CPU < 0 || nodes[0].Memory == 0 {
		t.Fatalf("node info %+v, want %+v", nodes[0], want)
	}
}
