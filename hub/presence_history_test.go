package hub_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

func TestPresence(t *testing.T) {
	t.Parallel()
	gone := newDisconnects()
	n := startNode(t, hub.Config{
		Handlers: hub.Handlers{OnDisconnect: gone.handler},
		Client:   hub.ClientConfig{AllowAnonymousConnectWithoutToken: true},
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("off", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowPresenceForClient: true}),
			ns("subs", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowSubscribeForAnonymous: true, Presence: true, AllowPresenceForSubscriber: true, AllowPresenceForAnonymous: true}),
			ns("cl", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowSubscribeForAnonymous: true, Presence: true, AllowPresenceForClient: true}),
		}},
	})
	a1 := n.dial(t)
	a1ID := a1.Connect("alice")["client"].(string)
	a2 := n.dial(t)
	a2ID := a2.Connect("alice")["client"].(string)
	b := n.dial(t)
	bID := b.Connect("bob")["client"].(string)
	anon1 := n.dial(t)
	anon1ID := anon1.ConnectWith(`{}`)["connect"].(map[string]any)["client"].(string)
	anon2 := n.dial(t)
	anon2.ConnectWith(`{}`)

	for _, cmd := range []string{"presence", "presence_stats"} {
		t.Run(cmd, func(t *testing.T) {
			q := func(c *rawClient, id int, ch string) map[string]any {
				return c.Call(`{"id":` + strconv.Itoa(id) + `,"` + cmd + `":{"channel":"` + ch + `"}}`)
			}
			jsonclient.WantError(t, q(a1, 100, "off:x"), 108)
			jsonclient.WantError(t, q(a1, 101, "nope:x"), 102)
			jsonclient.WantError(t, q(a1, 102, "subs:x"), 103) // not subscribed
		})
	}

	for _, c := range []*rawClient{a1, a2, b} {
		c.MustSubscribe(200, "cl:room", "")
	}
	anon1.MustSubscribe(200, "cl:room", "")
	pres := a1.Call(`{"id":201,"presence":{"channel":"cl:room"}}`)
	entries, _ := jsonclient.Path(pres, "presence", "presence").(map[string]any)
	if len(entries) != 4 {
		t.Fatalf("presence: %v", pres)
	}
	for id, user := range map[string]string{a1ID: "alice", a2ID: "alice", bID: "bob", anon1ID: ""} {
		e, _ := entries[id].(map[string]any)
		if e["client"] != id || e["user"] != user {
			t.Fatalf("presence[%s] = %v, want user %q", id, e, user)
		}
	}
	st := b.Call(`{"id":202,"presence_stats":{"channel":"cl:room"}}`)
	// alice twice counts once; anonymous clients count as one user.
	if jsonclient.Compact(t, st["presence_stats"]) != `{"num_clients":4,"num_users":3}` {
		t.Fatalf("presence_stats: %v", st)
	}
	// Anonymous clients without allow_presence_for_anonymous are refused.
	jsonclient.WantError(t, anon2.Call(`{"id":2,"presence":{"channel":"cl:room"}}`), 103)

	// Leaving removes the entry.
	b.Call(`{"id":203,"unsubscribe":{"channel":"cl:room"}}`)
	// The reply may come before the leave is done; the hub runs a
	// client's commands in order, so drain's sentinel reply comes after.
	b.Drain()
	anon1.Drop()
	gone.await(t, anon1ID)
	if st, err := n.hub.PresenceStats(context.Background(), "cl:room"); err != nil || st.NumClients != 2 || st.NumUsers != 1 {
		t.Fatalf("presence after one unsubscribe and one disconnect: %+v %v", st, err)
	}

	// Subscriber permission, anonymous subscriber allowed by for_anonymous.
	anon2.MustSubscribe(3, "subs:x", "")
	if st := anon2.Call(`{"id":4,"presence_stats":{"channel":"subs:x"}}`); jsonclient.Compact(t, st["presence_stats"]) != `{"num_clients":1,"num_users":1}` {
		t.Fatalf("presence_stats: %v", st)
	}
	// An empty presence is an empty object, not absent.
	if p := a1.Call(`{"id":300,"presence":{"channel":"cl:empty"}}`); jsonclient.Compact(t, p["presence"]) != `{"presence":{}}` {
		t.Fatalf("empty presence: %v", p)
	}
	if p := a1.Call(`{"id":301,"presence_stats":{"channel":"cl:empty"}}`); jsonclient.Compact(t, p["presence_stats"]) != `{"num_clients":0,"num_users":0}` {
		t.Fatalf("empty presence_stats: %v", p)
	}
	a1.Send(`{"id":302,"presence":{"channel":""}}`)
	a1.ExpectClose(3501, "bad request")
}

func TestHistory(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Client: hub.ClientConfig{HistoryMaxPublicationLimit: 3},
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("off", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowHistoryForClient: true}),
			ns("subs", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowHistoryForSubscriber: true, HistorySize: 10, HistoryTTL: time.Minute}),
			ns("hx", hub.NamespaceOptions{AllowHistoryForClient: true, AllowPublishForClient: true, HistorySize: 10, HistoryTTL: time.Minute}),
		}},
	})
	c := n.dial(t)
	id := c.Connect("u")["client"].(string)
	jsonclient.WantError(t, c.Call(`{"id":2,"history":{"channel":"off:x","limit":-1}}`), 108)
	jsonclient.WantError(t, c.Call(`{"id":3,"history":{"channel":"subs:x","limit":-1}}`), 103)
	c.MustSubscribe(4, "subs:x", "")
	if m := c.Call(`{"id":5,"history":{"channel":"subs:x","limit":-1}}`); m["history"] == nil {
		t.Fatalf("subscriber history: %v", m)
	}

	for i := 1; i <= 5; i++ {
		c.Call(`{"id":` + strconv.Itoa(10+i) + `,"publish":{"channel":"hx:x","data":{"n":` + strconv.Itoa(i) + `}}}`)
	}
	top := c.Call(`{"id":20,"history":{"channel":"hx:x"}}`)
	epoch, _ := jsonclient.Path(top, "history", "epoch").(string)
	if epoch == "" || jsonclient.Num(jsonclient.Path(top, "history", "offset")) != 5 {
		t.Fatalf("position: %v", top)
	}
	if pubs, ok := jsonclient.Path(top, "history", "publications").([]any); !ok || len(pubs) != 0 {
		t.Fatalf("limit 0 must return the position only, with publications present and empty: %v", top)
	}
	offsets := func(m map[string]any) []int64 {
		t.Helper()
		h, ok := m["history"].(map[string]any)
		if !ok {
			t.Fatalf("history failed: %v", m)
		}
		if h["epoch"] != epoch || jsonclient.Num(h["offset"]) != 5 {
			t.Fatalf("history position: %v", h)
		}
		var out []int64
		for _, p := range h["publications"].([]any) {
			out = append(out, jsonclient.Num(p.(map[string]any)["offset"]))
		}
		return out
	}
	for _, tc := range []struct {
		req  string
		want string
	}{
		{`"limit":-1`, "[1 2 3]"}, // capped at history_max_publication_limit
		{`"limit":100`, "[1 2 3]"},
		{`"limit":2`, "[1 2]"},
		{`"limit":-1,"reverse":true`, "[5 4 3]"},
		{`"limit":-1,"since":{"offset":2,"epoch":"` + epoch + `"}`, "[3 4 5]"},
		{`"limit":2,"since":{"offset":2}`, "[3 4]"},
		{`"limit":-1,"since":{"offset":4,"epoch":"` + epoch + `"},"reverse":true`, "[3 2 1]"},
		{`"limit":1,"since":{"offset":4},"reverse":true`, "[3]"},
		{`"limit":-1,"since":{"offset":5}`, "[]"},
	} {
		got := fmt.Sprint(offsets(c.Call(`{"id":30,"history":{"channel":"hx:x",` + tc.req + `}}`)))
		if got != tc.want {
			t.Errorf("history {%s}: offsets %s, want %s", tc.req, got, tc.want)
		}
	}
	full := c.Call(`{"id":31,"history":{"channel":"hx:x","limit":1}}`)
	p0 := jsonclient.Path(full, "history", "publications").([]any)[0].(map[string]any)
	if jsonclient.Compact(t, p0) != `{"data":{"n":1},"info":{"client":"`+id+`","user":"u"},"offset":1}` {
		t.Fatalf("history publication: %v", p0)
	}
	jsonclient.WantError(t, c.Call(`{"id":32,"history":{"channel":"hx:x","limit":-1,"since":{"offset":0,"epoch":"`+epoch+`"},"reverse":true}}`), 107)
	jsonclient.WantError(t, c.Call(`{"id":33,"history":{"channel":"hx:x","limit":-1,"since":{"offset":1,"epoch":"other"}}}`), 112)
	jsonclient.WantError(t, c.Call(`{"id":34,"history":{"channel":"nope:x"}}`), 102)
	c.Send(`{"id":35,"history":{"channel":""}}`)
	c.ExpectClose(3501, "bad request")
}
