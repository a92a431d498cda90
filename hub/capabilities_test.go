package hub_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/websocket"
)

// capsConfig has namespaces that allow clients nothing, so that whatever
// a test's client may do there comes from its capabilities.
func capsConfig() hub.Config {
	closed := hub.NamespaceOptions{Presence: true, JoinLeave: true, HistorySize: 10, HistoryTTL: time.Minute}
	return hub.Config{Channels: hub.ChannelConfig{
		WithoutNamespace: closed,
		Namespaces:       []hub.Namespace{{Name: "news", NamespaceOptions: closed}, {Name: "chat", NamespaceOptions: closed}},
	}}
}

// jwtToken signs claims with golang-jwt directly (not auth.Signer), so
// that the claim names on the wire are what is tested.
func jwtToken(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// errCode is the error code of a reply, 0 for a result.
func errCode(m map[string]any) int {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	return int(jsonclient.Num(e["code"]))
}

// TestConnectionCaps: a connection token's caps grant exactly the
// operations they list on the channels they match (exact, wildcard and
// regex), over the real WebSocket transport; nothing else is granted.
func TestConnectionCaps(t *testing.T) {
	t.Parallel()
	n := startNodeWS(t, capsConfig(), websocket.Config{})
	c := n.dial(t)
	c.ConnectToken(jwtToken(t, jwt.MapClaims{"sub": "u1", "caps": []any{
		map[string]any{"channels": []string{"news:*"}, "match": "wildcard", "allow": []string{"sub"}},
		map[string]any{"channels": []string{"news:sports"}, "allow": []string{"pub", "hst", "prs"}},
		map[string]any{"channels": []string{`^room_[0-9]+$`}, "match": "regex", "allow": []string{"sub", "pub"}},
	}}))

	// sub alone: subscribed, neither positioned nor recoverable though
	// asked, and no publish, history or presence.
	res := c.MustSubscribe(2, "news:tech", `"recoverable":true`)
	if res["recoverable"] == true || res["positioned"] == true {
		t.Fatalf("news:tech without hst: %v", res)
	}
	for id, cmd := range map[int]string{
		3: `"publish":{"channel":"news:tech","data":{}}`,
		4: `"history":{"channel":"news:tech","limit":-1}`,
		5: `"presence":{"channel":"news:tech"}`,
	} {
		if m := c.Call(`{"id":` + itoa(id) + `,` + cmd + `}`); errCode(m) != int(protocol.ErrorPermissionDenied) {
			t.Errorf("%s without its cap: %v, want 103", cmd, m)
		}
	}

	// Two objects together: sub from the wildcard, the rest from the
	// exact one; hst makes the subscription recoverable.
	res = c.MustSubscribe(6, "news:sports", `"recoverable":true`)
	if res["recoverable"] != true {
		t.Fatalf("news:sports with hst: %v", res)
	}
	for id, cmd := range map[int]string{
		7: `"publish":{"channel":"news:sports","data":{"x":1}}`,
		8: `"history":{"channel":"news:sports","limit":-1}`,
		9: `"presence_stats":{"channel":"news:sports"}`,
	} {
		if m := c.Call(`{"id":` + itoa(id) + `,` + cmd + `}`); errCode(m) != 0 {
			t.Errorf("%s with its cap: %v", cmd, m)
		}
	}

	// Regex: a channel of the default namespace.
	c.MustSubscribe(10, "room_12", "")
	if m := c.Call(`{"id":11,"publish":{"channel":"room_12","data":{}}}`); errCode(m) != 0 {
		t.Fatalf("publish to room_12: %v", m)
	}
	for id, ch := range map[int]string{12: "room_x", 13: "chat:1", 14: "news"} {
		if m := c.Subscribe(id, ch, ""); errCode(m) != int(protocol.ErrorPermissionDenied) {
			t.Errorf("subscribe %s matching no cap: %v, want 103", ch, m)
		}
	}
}

// TestCapsPrivateChannel: even a cap for every channel does not open a
// private channel, which takes a subscription token, as in Centrifugo PRO.
func TestCapsPrivateChannel(t *testing.T) {
	t.Parallel()
	n := startNode(t, capsConfig())
	c := n.dial(t)
	c.ConnectToken(jwtToken(t, jwt.MapClaims{"sub": "u1", "caps": []any{
		map[string]any{"channels": []string{"*"}, "match": "wildcard", "allow": []string{"sub", "pub", "hst", "prs"}},
	}}))
	c.MustSubscribe(2, "chat:any", "")
	if m := c.Subscribe(3, "$secret", ""); errCode(m) != int(protocol.ErrorPermissionDenied) {
		t.Fatalf("private channel with caps only: %v, want 103", m)
	}
}

// TestBadCaps: caps a token cannot carry close the connection with 3500
// (invalid token) and a reason naming the problem; a subscription token
// with an unknown allow is refused with 103 saying why.
func TestBadCaps(t *testing.T) {
	t.Parallel()
	n := startNodeWS(t, capsConfig(), websocket.Config{})
	for name, tc := range map[string]struct {
		caps []any
		want string
	}{
		"match":  {[]any{map[string]any{"channels": []string{"a"}, "match": "glob", "allow": []string{"sub"}}}, `caps[0].channels[0]: unknown match "glob"`},
		"regex":  {[]any{map[string]any{"channels": []string{"a", "(x"}, "match": "regex", "allow": []string{"sub"}}}, `caps[0].channels[1]: error parsing regexp`},
		"op":     {[]any{map[string]any{"channels": []string{"a"}, "allow": []string{"sub"}}, map[string]any{"channels": []string{"b"}, "allow": []string{"write"}}}, `caps[1].allow[0]: unknown capability "write"`},
		"empty":  {[]any{map[string]any{"channels": []string{}, "allow": []string{"sub"}}}, `caps[0].channels: empty`},
		"bounds": {manyCaps(auth.MaxCapObjects + 1), `objects, at most`},
	} {
		c := n.dial(t)
		c.Send(`{"id":1,"connect":{"token":"` + jwtToken(t, jwt.MapClaims{"sub": "u1", "caps": tc.caps}) + `"}}`)
		ce, err := awaitClose(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ce.Code != int(protocol.DisconnectInvalidToken) || !strings.Contains(ce.Reason, tc.want) {
			t.Errorf("%s: close %d %q, want 3500 naming %q", name, ce.Code, ce.Reason, tc.want)
		}
	}

	c := n.dial(t)
	c.Connect("u1")
	m := c.Subscribe(2, "chat:1", `"token":"`+jwtToken(t, jwt.MapClaims{"sub": "u1", "channel": "chat:1", "allow": []string{"pub", "all"}})+`"`)
	e, _ := m["error"].(map[string]any)
	if errCode(m) != int(protocol.ErrorPermissionDenied) || !strings.Contains(e["message"].(string), `allow[1]: unknown capability "all"`) {
		t.Fatalf("subscription token with a bad allow: %v", m)
	}
}

func manyCaps(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"channels": []string{"c" + itoa(i)}, "allow": []string{"sub"}}
	}
	return out
}

// TestSubscriptionAllow: a subscription token's allow grants publish and
// history in its channel, for that subscription only, and nothing it
// does not list.
func TestSubscriptionAllow(t *testing.T) {
	t.Parallel()
	n := startNodeWS(t, capsConfig(), websocket.Config{})
	c := n.dial(t)
	c.Connect("u1")
	tok := jwtToken(t, jwt.MapClaims{"sub": "u1", "channel": "chat:1", "allow": []string{"pub", "hst"}})
	if res := c.MustSubscribe(2, "chat:1", `"token":"`+tok+`","recoverable":true`); res["recoverable"] != true {
		t.Fatalf("hst in allow makes the subscription recoverable: %v", res)
	}
	if m := c.Call(`{"id":3,"publish":{"channel":"chat:1","data":{"a":1}}}`); errCode(m) != 0 {
		t.Fatalf("publish with pub in allow: %v", m)
	}
	if m := c.Call(`{"id":4,"history":{"channel":"chat:1","limit":-1}}`); errCode(m) != 0 {
		t.Fatalf("history with hst in allow: %v", m)
	}
	if m := c.Call(`{"id":5,"presence":{"channel":"chat:1"}}`); errCode(m) != int(protocol.ErrorPermissionDenied) {
		t.Fatalf("presence without prs in allow: %v, want 103", m)
	}
	// Another connection of the same user has no such subscription.
	o := n.dial(t)
	o.Connect("u1")
	if m := o.Call(`{"id":2,"publish":{"channel":"chat:1","data":{}}}`); errCode(m) != int(protocol.ErrorPermissionDenied) {
		t.Fatalf("publish from a connection without the subscription: %v, want 103", m)
	}
}

// TestHandlerCaps: the connect handler's caps (as the connect proxy's
// result gives them) and the subscribe handler's allow work as a token's;
// a refresh with new caps unsubscribes (2000) from the channels only the
// old caps allowed and keeps the others.
func TestHandlerCaps(t *testing.T) {
	t.Parallel()
	first, err := auth.CompileCaps([]auth.ChannelCaps{{Channels: []string{"news:a", "news:b"}, Allow: []string{"sub"}}})
	if err != nil {
		t.Fatal(err)
	}
	later, err := auth.CompileCaps([]auth.ChannelCaps{{Channels: []string{"news:a"}, Allow: []string{"sub"}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := capsConfig()
	cfg.Channels.Namespaces = append(cfg.Channels.Namespaces, hub.Namespace{Name: "open", NamespaceOptions: hub.NamespaceOptions{AllowSubscribeForClient: true}})
	cfg.Handlers.OnConnecting = func(context.Context, hub.ConnectEvent) (hub.ConnectReply, error) {
		return hub.ConnectReply{User: "u1", Caps: first}, nil
	}
	cfg.Handlers.OnRefresh = func(context.Context, *hub.Client, hub.RefreshEvent) (hub.RefreshReply, error) {
		return hub.RefreshReply{ExpireAt: time.Now().Add(time.Hour).Unix(), Caps: later}, nil
	}
	cfg.Handlers.OnSubscribe = func(_ context.Context, _ *hub.Client, ev hub.SubscribeEvent) (hub.SubscribeReply, error) {
		if ev.Channel == "chat:p" {
			return hub.SubscribeReply{Allow: auth.OpPresence}, nil
		}
		return hub.SubscribeReply{}, hub.ErrUseDefault
	}
	n := startNodeWS(t, cfg, websocket.Config{})
	c := n.dial(t)
	c.ConnectWith(`{}`)
	c.MustSubscribe(2, "news:a", "")
	c.MustSubscribe(3, "news:b", "")
	c.MustSubscribe(4, "open:x", "")
	if m := c.Subscribe(5, "news:c", ""); errCode(m) != int(protocol.ErrorPermissionDenied) {
		t.Fatalf("news:c outside the handler's caps: %v", m)
	}
	c.MustSubscribe(6, "chat:p", "")
	if m := c.Call(`{"id":7,"presence":{"channel":"chat:p"}}`); errCode(m) != 0 {
		t.Fatalf("presence with prs from the subscribe handler: %v", m)
	}

	if m := c.Call(`{"id":8,"refresh":{"token":"ignored"}}`); errCode(m) != 0 {
		t.Fatalf("refresh: %v", m)
	}
	var unsubscribed []string
	for _, m := range c.Drain() {
		push, _ := m["push"].(map[string]any)
		if u, ok := push["unsubscribe"].(map[string]any); ok {
			if jsonclient.Num(u["code"]) != int64(protocol.UnsubscribeServer) {
				t.Errorf("unsubscribe push %v, want code 2000", m)
			}
			unsubscribed = append(unsubscribed, push["channel"].(string))
		}
	}
	if strings.Join(unsubscribed, ",") != "news:b" {
		t.Fatalf("unsubscribed after new caps: %v, want news:b only", unsubscribed)
	}
	if m := c.Subscribe(9, "news:b", ""); errCode(m) != int(protocol.ErrorPermissionDenied) {
		t.Fatalf("news:b after its cap went: %v", m)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// awaitClose reads c until the server closes it.
func awaitClose(c *rawClient) (*wire.CloseError, error) {
	return wire.AwaitClose(c.Wire(), 10*time.Second)
}

// TestCapsResumeAndRefreshToken: a subscription the client asks to resume
// at connect is made when its caps allow it; a refresh token without caps
// takes it away (2000). A sub_refresh token's allow replaces the
// subscription's.
func TestCapsResumeAndRefreshToken(t *testing.T) {
	t.Parallel()
	n := startNodeWS(t, capsConfig(), websocket.Config{})
	c := n.dial(t)
	caps := []any{map[string]any{"channels": []string{"news:*"}, "match": "wildcard", "allow": []string{"sub"}}}
	m := c.ConnectWith(`{"token":"` + jwtToken(t, jwt.MapClaims{"sub": "u1", "caps": caps}) + `","subs":{"news:a":{},"chat:b":{}}}`)
	res, _ := m["connect"].(map[string]any)
	subs, _ := res["subs"].(map[string]any)
	if subs["news:a"] == nil || subs["chat:b"] != nil {
		t.Fatalf("resumed at connect: %v, want news:a only", m)
	}

	tok := func(allow ...string) string {
		return jwtToken(t, jwt.MapClaims{"sub": "u1", "channel": "chat:c", "allow": allow, "exp": time.Now().Add(time.Hour).Unix()})
	}
	c.MustSubscribe(2, "chat:c", `"token":"`+tok("pub")+`"`)
	if m := c.Call(`{"id":3,"sub_refresh":{"channel":"chat:c","token":"` + tok("prs") + `"}}`); errCode(m) != 0 {
		t.Fatalf("sub_refresh: %v", m)
	}
	if m := c.Call(`{"id":4,"presence":{"channel":"chat:c"}}`); errCode(m) != 0 {
		t.Fatalf("presence after sub_refresh granted prs: %v", m)
	}
	if m := c.Call(`{"id":5,"publish":{"channel":"chat:c","data":{}}}`); errCode(m) != int(protocol.ErrorPermissionDenied) {
		t.Fatalf("publish after sub_refresh took pub away: %v, want 103", m)
	}

	if m := c.Call(`{"id":6,"refresh":{"token":"` + jwtToken(t, jwt.MapClaims{"sub": "u1"}) + `"}}`); errCode(m) != 0 {
		t.Fatalf("refresh: %v", m)
	}
	var gone []string
	for _, m := range c.Drain() {
		push, _ := m["push"].(map[string]any)
		if u, ok := push["unsubscribe"].(map[string]any); ok && jsonclient.Num(u["code"]) == int64(protocol.UnsubscribeServer) {
			gone = append(gone, push["channel"].(string))
		}
	}
	if strings.Join(gone, ",") != "news:a" {
		t.Fatalf("unsubscribed after a refresh token without caps: %v, want news:a (chat:c came with its token)", gone)
	}
}
