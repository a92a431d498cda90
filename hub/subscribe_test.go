package hub_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

func ns(name string, o hub.NamespaceOptions) hub.Namespace {
	return hub.Namespace{Name: name, NamespaceOptions: o}
}

func TestSubscribeValidationOrder(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Client: hub.ClientConfig{ChannelLimit: 2},
		Channels: hub.ChannelConfig{
			MaxLength:        20,
			WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true},
			Namespaces: []hub.Namespace{
				ns("open", hub.NamespaceOptions{AllowSubscribeForClient: true}),
				ns("re", hub.NamespaceOptions{AllowSubscribeForClient: true, ChannelRegex: `^[a-z]+$`}),
			},
		},
	})
	c := n.dial(t)
	c.Connect("u")
	for i, tc := range []struct {
		ch   string
		code int
	}{
		{"nope:" + strings.Repeat("x", 20), 107}, // length before namespace
		{"nope:x", 102},
		{"$nope:x", 102}, // namespace before the private check
		{"chåt", 107},    // non-ASCII without a regex
		{"re:ABC", 107},  // regex mismatch
		{"$re:ABC", 107}, // name check before the private check
		{"$open:x", 103}, // private without a token
		{"re:ab:c", 107}, // regex applies to everything after the namespace
		{"open:a", 0},
		{"open:a", 105},                // already subscribed
		{"re:abc", 0},                  // second and last slot
		{"nope:y", 106},                // limit before namespace
		{"open:b", 106},                // limit
		{"open:a", 105},                // already subscribed before limit
		{strings.Repeat("y", 21), 107}, // length before limit
	} {
		m := c.Subscribe(10+i, tc.ch, "")
		if tc.code == 0 {
			if m["subscribe"] == nil {
				t.Fatalf("subscribe %q: %v", tc.ch, m)
			}
			continue
		}
		if jsonclient.ErrorCode(m) != tc.code {
			t.Fatalf("subscribe %q: want error %d, got %v", tc.ch, tc.code, m)
		}
	}
	c.Send(`{"id":99,"subscribe":{"channel":""}}`)
	c.ExpectClose(3501, "bad request")

	c = n.dial(t)
	c.Connect("u")
	if m := c.Call(`{"id":2,"unsubscribe":{"channel":"open:never"}}`); jsonclient.Compact(t, m) != `{"id":2,"unsubscribe":{}}` {
		t.Fatalf("unsubscribe from a channel never subscribed: %v", m)
	}
	c.Send(`{"id":3,"unsubscribe":{"channel":""}}`)
	c.ExpectClose(3501, "bad request")
}

func TestSubscribeToken(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{
		// Nothing is allowed without a token.
		Namespaces: []hub.Namespace{ns("pp", hub.NamespaceOptions{
			Presence: true, AllowPresenceForSubscriber: true, AllowPublishForSubscriber: true,
		})},
	}})
	dial := func(t *testing.T) (*rawClient, string) {
		c := n.dial(t)
		return c, c.Connect("u")["client"].(string)
	}

	t.Run("grants a private channel, info becomes chan_info", func(t *testing.T) {
		t.Parallel()
		c, id := dial(t)
		tok := subToken(t, auth.SubscribeClaims{User: "u", Channel: "$pp:room", Info: []byte(`{"role":"admin"}`), ExpiresAt: time.Now().Add(time.Hour)})
		res := c.MustSubscribe(2, "$pp:room", `"token":"`+tok+`"`)
		if res["expires"] != true || jsonclient.Num(res["ttl"]) < 3590 || jsonclient.Num(res["ttl"]) > 3600 {
			t.Fatalf("subscribe result: %v", res)
		}
		pres := c.Call(`{"id":3,"presence":{"channel":"$pp:room"}}`)
		if got := jsonclient.Compact(t, jsonclient.Path(pres, "presence", "presence", id, "chan_info")); got != `{"role":"admin"}` {
			t.Fatalf("chan_info in presence: %v", pres)
		}
		c.Call(`{"id":4,"publish":{"channel":"$pp:room","data":{"x":1}}}`)
		p := jsonclient.PushesOf(c.Drain(), "$pp:room", "pub")
		if len(p) != 1 || jsonclient.Compact(t, jsonclient.Path(p[0], "info", "chan_info")) != `{"role":"admin"}` {
			t.Fatalf("chan_info in publication: %v", p)
		}
	})
	t.Run("grants a public channel the namespace refuses", func(t *testing.T) {
		t.Parallel()
		c, _ := dial(t)
		jsonclient.WantError(t, c.Subscribe(2, "pp:x", ""), 103)
		c.MustSubscribe(3, "pp:x", `"token":"`+subToken(t, auth.SubscribeClaims{User: "u", Channel: "pp:x"})+`"`)
	})
	t.Run("data is returned in the subscribe result", func(t *testing.T) {
		t.Parallel()
		c, _ := dial(t)
		res := c.MustSubscribe(2, "$pp:d", `"token":"`+subToken(t, auth.SubscribeClaims{User: "u", Channel: "$pp:d", Data: []byte(`{"state":[1,2]}`)})+`"`)
		if d := jsonclient.Compact(t, res["data"]); d != `{"state":[1,2]}` {
			t.Fatalf("subscribe result data %s: %v", d, res)
		}
	})
	t.Run("client claim matching", func(t *testing.T) {
		t.Parallel()
		c, id := dial(t)
		c.MustSubscribe(2, "pp:x", `"token":"`+subToken(t, auth.SubscribeClaims{User: "u", Channel: "pp:x", Client: id})+`"`)
	})
	t.Run("expired is 109", func(t *testing.T) {
		t.Parallel()
		c, _ := dial(t)
		tok := subToken(t, auth.SubscribeClaims{User: "u", Channel: "$pp:x", ExpiresAt: time.Now().Add(-time.Minute)})
		jsonclient.WantError(t, c.Subscribe(2, "$pp:x", `"token":"`+tok+`"`), 109)
	})
	t.Run("expire_at in the past is 110", func(t *testing.T) {
		t.Parallel()
		c, _ := dial(t)
		tok := subToken(t, auth.SubscribeClaims{User: "u", Channel: "$pp:x", ExpireAt: ptr(time.Now().Add(-time.Minute).Unix())})
		jsonclient.WantError(t, c.Subscribe(2, "$pp:x", `"token":"`+tok+`"`), 110)
	})
	t.Run("invalid is 103", func(t *testing.T) {
		t.Parallel()
		c, _ := dial(t)
		s, err := auth.NewHMACSigner("wrong-secret", "HS256")
		if err != nil {
			t.Fatal(err)
		}
		tok, err := s.SubscribeToken(auth.SubscribeClaims{User: "u", Channel: "$pp:x"})
		if err != nil {
			t.Fatal(err)
		}
		jsonclient.WantError(t, c.Subscribe(2, "$pp:x", `"token":"`+tok+`"`), 103)
		jsonclient.WantError(t, c.Subscribe(3, "$pp:x", `"token":"garbage"`), 103)
		// A connection token is not a subscription token.
		jsonclient.WantError(t, c.Subscribe(4, "$pp:x", `"token":"`+token(t, auth.ConnectClaims{User: "u"})+`"`), 103)
	})
	for name, claims := range map[string]auth.SubscribeClaims{
		"other channel": {User: "u", Channel: "$pp:other"},
		"other user":    {User: "v", Channel: "$pp:x"},
		"other client":  {User: "u", Channel: "$pp:x", Client: "not-this-client"},
	} {
		t.Run(name+" closes with 3500", func(t *testing.T) {
			t.Parallel()
			c, _ := dial(t)
			c.Send(`{"id":2,"subscribe":{"channel":"$pp:x","token":"` + subToken(t, claims) + `"}}`)
			c.ExpectClose(3500, "invalid token")
		})
	}
}

func TestSubscribeUserLimited(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Client: hub.ClientConfig{AllowAnonymousConnectWithoutToken: true},
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("dm", hub.NamespaceOptions{AllowUserLimitedChannels: true}),
			ns("nodm", hub.NamespaceOptions{}),
		}},
	})
	u1 := n.dial(t)
	u1.Connect("u1")
	u1.MustSubscribe(2, "dm:chat#u1,u2", "")
	jsonclient.WantError(t, u1.Subscribe(3, "dm:chat#u2,u3", ""), 103)
	jsonclient.WantError(t, u1.Subscribe(4, "dm:chat#u11", ""), 103)
	// The list is after the last '#'.
	u1.MustSubscribe(5, "dm:a#u2#u1", "")
	// Without allow_user_limited_channels '#' means nothing.
	jsonclient.WantError(t, u1.Subscribe(6, "nodm:chat#u1", ""), 103)

	anon := n.dial(t)
	anon.ConnectWith(`{}`)
	jsonclient.WantError(t, anon.Subscribe(2, "dm:chat#u1,", ""), 103)
}

func TestSubscribeAnonymousPermission(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Client: hub.ClientConfig{AllowAnonymousConnectWithoutToken: true},
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("clients", hub.NamespaceOptions{AllowSubscribeForClient: true}),
			ns("all", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowSubscribeForAnonymous: true}),
			ns("anononly", hub.NamespaceOptions{AllowSubscribeForAnonymous: true}),
		}},
	})
	anon := n.dial(t)
	anon.ConnectWith(`{}`)
	jsonclient.WantError(t, anon.Subscribe(2, "clients:x", ""), 103)
	anon.MustSubscribe(3, "all:x", "")
	// for_anonymous only widens for_client; alone it allows nobody.
	jsonclient.WantError(t, anon.Subscribe(4, "anononly:x", ""), 103)

	user := n.dial(t)
	user.Connect("u")
	user.MustSubscribe(2, "clients:x", "")
	user.MustSubscribe(3, "all:x", "")
	jsonclient.WantError(t, user.Subscribe(4, "anononly:x", ""), 103)
}

func TestSubscribePositioning(t *testing.T) {
	t.Parallel()
	hist := func(o hub.NamespaceOptions) hub.NamespaceOptions {
		o.HistorySize, o.HistoryTTL, o.AllowSubscribeForClient = 10, time.Minute, true
		return o
	}
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("hh", hist(hub.NamespaceOptions{})),
		ns("ap", hist(hub.NamespaceOptions{AllowPositioning: true})),
		ns("fp", hist(hub.NamespaceOptions{ForcePositioning: true})),
		ns("ar", hist(hub.NamespaceOptions{AllowRecovery: true})),
		ns("fr", hist(hub.NamespaceOptions{ForceRecovery: true})),
		ns("hc", hist(hub.NamespaceOptions{AllowHistoryForClient: true})),
		ns("hs", hist(hub.NamespaceOptions{AllowHistoryForSubscriber: true})),
		ns("nohist", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowHistoryForClient: true, AllowPositioning: true}),
	}}})
	c := n.dial(t)
	c.Connect("u")
	id := 10
	for _, tc := range []struct {
		ch, req                 string
		positioned, recoverable bool
	}{
		{"hh:1", `"positioned":true,"recoverable":true`, false, false},
		{"ap:1", `"positioned":true`, true, false},
		{"ap:2", ``, false, false},
		{"ap:3", `"recoverable":true`, false, false},
		{"fp:1", ``, true, false},
		{"ar:1", `"recoverable":true`, true, true},
		{"ar:2", `"positioned":true`, false, false},
		{"fr:1", ``, true, true},
		{"hc:1", `"positioned":true`, true, false},
		{"hc:2", `"recoverable":true`, true, true},
		{"hs:1", `"recoverable":true`, true, true},
		{"nohist:1", `"positioned":true,"recoverable":true`, false, false},
	} {
		id++
		res := c.MustSubscribe(id, tc.ch, tc.req)
		if (res["positioned"] == true) != tc.positioned || (res["recoverable"] == true) != tc.recoverable {
			t.Errorf("%s with {%s}: want positioned=%v recoverable=%v, got %v", tc.ch, tc.req, tc.positioned, tc.recoverable, res)
			continue
		}
		if tc.positioned && (res["epoch"] == nil || res["epoch"] == "") {
			t.Errorf("%s: positioned without epoch: %v", tc.ch, res)
		}
		if !tc.positioned && (res["epoch"] != nil || res["offset"] != nil) {
			t.Errorf("%s: stream position on a plain subscription: %v", tc.ch, res)
		}
	}
	// recover on a subscription without recovery is ignored, but the
	// reply says the client was recovering (reference: was_recovering =
	// req.recover).
	for _, ch := range []string{"hh:2", "fp:2"} {
		id++
		res := c.MustSubscribe(id, ch, `"recover":true,"offset":0`)
		if res["was_recovering"] != true || res["recovered"] != nil || res["publications"] != nil {
			t.Errorf("%s recover without recovery: %v", ch, res)
		}
	}
}

func TestJoinLeave(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("force", hub.NamespaceOptions{AllowSubscribeForClient: true, Presence: true, JoinLeave: true, ForcePushJoinLeave: true}),
		ns("ask", hub.NamespaceOptions{AllowSubscribeForClient: true, Presence: true, JoinLeave: true, AllowPresenceForSubscriber: true}),
		ns("noperm", hub.NamespaceOptions{AllowSubscribeForClient: true, Presence: true, JoinLeave: true}),
		ns("off", hub.NamespaceOptions{AllowSubscribeForClient: true, Presence: true, AllowPresenceForClient: true}),
	}}})
	a := n.dial(t)
	aID := a.Connect("a")["client"].(string)
	b := n.dial(t)
	bID := b.Connect("b")["client"].(string)
	infoA := `{"client":"` + aID + `","user":"a"}`
	infoB := `{"client":"` + bID + `","user":"b"}`

	t.Run("own join follows the reply in one frame", func(t *testing.T) {
		a.Send(`{"id":2,"subscribe":{"channel":"force:r"}}`)
		msgs := a.ReadMsgs(2)
		if jsonclient.Num(msgs[0]["id"]) != 2 || msgs[0]["subscribe"] == nil {
			t.Fatalf("first message %v", msgs[0])
		}
		if j := jsonclient.PushesOf(msgs[1:], "force:r", "join"); len(j) != 1 || jsonclient.Compact(t, j[0]["info"]) != infoA {
			t.Fatalf("second message %v", msgs[1])
		}
	})
	t.Run("others see join and leave on unsubscribe", func(t *testing.T) {
		b.MustSubscribe(2, "force:r", "")
		if j := jsonclient.PushesOf(a.Drain(), "force:r", "join"); len(j) != 1 || jsonclient.Compact(t, j[0]["info"]) != infoB {
			t.Fatalf("join of b seen by a: %v", j)
		}
		b.Drain() // b's own join
		b.Call(`{"id":3,"unsubscribe":{"channel":"force:r"}}`)
		if l := jsonclient.PushesOf(a.Drain(), "force:r", "leave"); len(l) != 1 || jsonclient.Compact(t, l[0]["info"]) != infoB {
			t.Fatalf("leave of b seen by a: %v", l)
		}
		if msgs := b.Drain(); len(msgs) != 0 {
			t.Fatalf("b after unsubscribing: %v", msgs)
		}
	})
	t.Run("asked with presence permission", func(t *testing.T) {
		a.MustSubscribe(4, "ask:r", `"join_leave":true`)
		if j := jsonclient.PushesOf(a.Drain(), "ask:r", "join"); len(j) != 1 {
			t.Fatalf("own join: %v", j)
		}
		b.MustSubscribe(4, "ask:r", "") // not asking: no pushes for b
		if j := jsonclient.PushesOf(a.Drain(), "ask:r", "join"); len(j) != 1 || jsonclient.Compact(t, j[0]["info"]) != infoB {
			t.Fatalf("join of b: %v", j)
		}
		if msgs := b.Drain(); len(msgs) != 0 {
			t.Fatalf("b did not ask for join/leave: %v", msgs)
		}
	})
	t.Run("asked without presence permission", func(t *testing.T) {
		a.MustSubscribe(5, "noperm:r", `"join_leave":true`)
		b.MustSubscribe(5, "noperm:r", `"join_leave":true`)
		if msgs := append(a.Drain(), b.Drain()...); len(msgs) != 0 {
			t.Fatalf("join pushes without presence permission: %v", msgs)
		}
	})
	t.Run("asked where join_leave is off", func(t *testing.T) {
		a.MustSubscribe(6, "off:r", `"join_leave":true`)
		b.MustSubscribe(6, "off:r", `"join_leave":true`)
		if msgs := append(a.Drain(), b.Drain()...); len(msgs) != 0 {
			t.Fatalf("join pushes with join_leave off: %v", msgs)
		}
	})
	t.Run("leave on disconnect", func(t *testing.T) {
		c := n.dial(t)
		cID := c.Connect("c")["client"].(string)
		c.MustSubscribe(2, "force:r", "")
		a.Drain()
		c.Drop()
		m := a.Next()
		if l := jsonclient.PushesOf([]map[string]any{m}, "force:r", "leave"); len(l) != 1 || jsonclient.Path(l[0], "info", "client") != cID {
			t.Fatalf("leave of c after its disconnect: %v", m)
		}
	})
}

// TestReplyAndOwnJoinShareAFrame sends unsubscribe and subscribe frames
// back to back, many times: the subscribe reply and the client's own join
// must always come in one frame, even while the previous frame's reply is
// still being written. The holds are lengthened: the 10 ms one ends, as
// designed, when a loaded machine runs the subscribe past it.
func TestReplyAndOwnJoinShareAFrame(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
		AllowSubscribeForClient: true, JoinLeave: true, ForcePushJoinLeave: true,
	}}})
	n.hub.LengthenWriteHolds()
	c := n.dial(t)
	c.Connect("u")
	for i := range 300 {
		id := 10 + 2*i
		c.Send(`{"id":` + strconv.Itoa(id) + `,"unsubscribe":{"channel":"j"}}`)
		c.Send(`{"id":` + strconv.Itoa(id+1) + `,"subscribe":{"channel":"j"}}`)
		for {
			msgs := c.DecodeFrame(c.Read())
			last := msgs[len(msgs)-1]
			if jsonclient.Num(last["id"]) == int64(id) {
				continue // the unsubscribe reply in a frame of its own
			}
			if len(msgs) < 2 || jsonclient.Num(msgs[len(msgs)-2]["id"]) != int64(id+1) || jsonclient.Path(last, "push", "join") == nil {
				t.Fatalf("iteration %d: subscribe reply and join not in one frame: %v", i, msgs)
			}
			break
		}
	}
}
