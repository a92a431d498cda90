package hub_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

func TestRefresh(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Version: "1.2.3"})
	hour := func(h int) time.Time { return time.Now().Add(time.Duration(h) * time.Hour) }
	dial := func(t *testing.T) (*rawClient, string) {
		c := n.dial(t)
		res := c.ConnectToken(token(t, auth.ConnectClaims{User: "u", ExpiresAt: hour(1)}))
		return c, res["client"].(string)
	}
	refresh := func(c *rawClient, tok string) map[string]any {
		return c.Call(`{"id":5,"refresh":{"token":"` + tok + `"}}`)
	}

	t.Run("success updates ttl", func(t *testing.T) {
		t.Parallel()
		c, id := dial(t)
		m := refresh(c, token(t, auth.ConnectClaims{User: "u", ExpiresAt: hour(2)}))
		res, _ := m["refresh"].(map[string]any)
		// As the reference: expires and ttl only.
		if _, ok := res["client"]; ok || res["version"] != nil || res["expires"] != true || id == "" {
			t.Fatalf("refresh result: %v", m)
		}
		if ttl := jsonclient.Num(res["ttl"]); ttl < 7190 || ttl > 7200 {
			t.Fatalf("ttl %d, want about 7200", ttl)
		}
	})
	t.Run("expire_at in the past is 110", func(t *testing.T) {
		t.Parallel()
		c, _ := dial(t)
		jsonclient.WantError(t, refresh(c, token(t, auth.ConnectClaims{User: "u", ExpireAt: ptr(time.Now().Add(-time.Minute).Unix())})), 110)
	})
	for _, tc := range []struct {
		name   string
		tok    func(t *testing.T) string
		code   int
		reason string
	}{
		{"expired closes with 3005", func(t *testing.T) string {
			return token(t, auth.ConnectClaims{User: "u", ExpiresAt: time.Now().Add(-time.Minute)})
		}, 3005, "connection expired"},
		{"invalid closes with 3500", func(t *testing.T) string { return "garbage" }, 3500, "invalid token"},
		{"other user closes with 3500", func(t *testing.T) string {
			return token(t, auth.ConnectClaims{User: "someone-else", ExpiresAt: hour(2)})
		}, 3500, "invalid token"},
		{"empty closes with 3501", func(t *testing.T) string { return "" }, 3501, "bad request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := dial(t)
			c.Send(`{"id":5,"refresh":{"token":"` + tc.tok(t) + `"}}`)
			c.ExpectClose(tc.code, tc.reason)
		})
	}
}

// TestConnectionExpiry connects two clients with a token that expires in
// about three seconds. The one that does not refresh is closed with 3005
// once the expired close delay has passed; the one that refreshed is still
// served after that.
func TestConnectionExpiry(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Client: hub.ClientConfig{ExpiredCloseDelay: time.Second}})
	exp := time.Now().Add(3 * time.Second)
	tok := token(t, auth.ConnectClaims{User: "u", ExpiresAt: exp})
	stale := n.dial(t)
	stale.ConnectToken(tok)
	fresh := n.dial(t)
	fresh.ConnectToken(tok)
	if m := fresh.Call(`{"id":2,"refresh":{"token":"` + token(t, auth.ConnectClaims{User: "u", ExpiresAt: time.Now().Add(time.Hour)}) + `"}}`); m["refresh"] == nil {
		t.Fatalf("refresh: %v", m)
	}
	stale.ExpectClose(3005, "connection expired")
	// The token's exp is in whole seconds; the close must not come before it.
	if now := time.Now().Unix(); now < exp.Unix() {
		t.Fatalf("closed at %d, before exp %d", now, exp.Unix())
	}
	if m := fresh.Call(`{"id":3,"rpc":{"method":"x"}}`); jsonclient.ErrorCode(m) != 108 {
		t.Fatalf("refreshed connection after the old deadline: %v", m)
	}
}

func TestSubRefresh(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{ns("pp", hub.NamespaceOptions{})}}})
	c := n.dial(t)
	id := c.Connect("u")["client"].(string)
	subTok := func(claims auth.SubscribeClaims) string { return subToken(t, claims) }
	c.MustSubscribe(2, "$pp:a", `"token":"`+subTok(auth.SubscribeClaims{User: "u", Channel: "$pp:a", ExpiresAt: time.Now().Add(time.Hour)})+`"`)
	subRefresh := func(id int, ch, tok string) map[string]any {
		return c.Call(`{"id":` + strconv.Itoa(id) + `,"sub_refresh":{"channel":"` + ch + `","token":"` + tok + `"}}`)
	}

	jsonclient.WantError(t, subRefresh(3, "$pp:b", subTok(auth.SubscribeClaims{User: "u", Channel: "$pp:b"})), 103)
	jsonclient.WantError(t, subRefresh(4, "$pp:a", ""), 107)
	m := subRefresh(5, "$pp:a", subTok(auth.SubscribeClaims{User: "u", Channel: "$pp:a", Client: id, ExpiresAt: time.Now().Add(2 * time.Hour)}))
	res, _ := m["sub_refresh"].(map[string]any)
	if res["expires"] != true || jsonclient.Num(res["ttl"]) < 7190 || jsonclient.Num(res["ttl"]) > 7200 {
		t.Fatalf("sub_refresh: %v", m)
	}
	jsonclient.WantError(t, subRefresh(6, "$pp:a", subTok(auth.SubscribeClaims{User: "u", Channel: "$pp:a", ExpiresAt: time.Now().Add(-time.Minute)})), 110)
	jsonclient.WantError(t, subRefresh(7, "$pp:a", subTok(auth.SubscribeClaims{User: "u", Channel: "$pp:a", ExpireAt: ptr(time.Now().Add(-time.Minute).Unix())})), 110)
	if m := subRefresh(8, "$pp:a", subTok(auth.SubscribeClaims{User: "u", Channel: "$pp:a"})); jsonclient.Compact(t, m["sub_refresh"]) != `{}` {
		t.Fatalf("sub_refresh without expiry: %v", m)
	}

	for name, claims := range map[string]auth.SubscribeClaims{
		"other channel": {User: "u", Channel: "$pp:b"},
		"other user":    {User: "v", Channel: "$pp:a"},
		"other client":  {User: "u", Channel: "$pp:a", Client: "other"},
	} {
		t.Run(name, func(t *testing.T) {
			c := n.dial(t)
			c.Connect("u")
			c.MustSubscribe(2, "$pp:a", `"token":"`+subTok(auth.SubscribeClaims{User: "u", Channel: "$pp:a"})+`"`)
			c.Send(`{"id":3,"sub_refresh":{"channel":"$pp:a","token":"` + subTok(claims) + `"}}`)
			c.ExpectClose(3500, "invalid token")
		})
	}
	t.Run("invalid token", func(t *testing.T) {
		c := n.dial(t)
		c.Connect("u")
		c.MustSubscribe(2, "$pp:a", `"token":"`+subTok(auth.SubscribeClaims{User: "u", Channel: "$pp:a"})+`"`)
		c.Send(`{"id":3,"sub_refresh":{"channel":"$pp:a","token":"garbage"}}`)
		c.ExpectClose(3500, "invalid token")
	})
	t.Run("empty channel", func(t *testing.T) {
		c := n.dial(t)
		c.Connect("u")
		c.Send(`{"id":3,"sub_refresh":{"token":"x"}}`)
		c.ExpectClose(3501, "bad request")
	})
}

// TestSubscriptionExpiry subscribes twice with tokens that expire in two
// seconds and refreshes one: the other is unsubscribed with 2501 after the
// expired-subscription delay, the refreshed one keeps delivering.
func TestSubscriptionExpiry(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Client:   hub.ClientConfig{ExpiredSubCloseDelay: 500 * time.Millisecond},
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{ns("pp", hub.NamespaceOptions{})}},
	})
	c := n.dial(t)
	c.Connect("u")
	at := time.Now().Add(2 * time.Second).Unix()
	for i, ch := range []string{"$pp:old", "$pp:new"} {
		res := c.MustSubscribe(2+i, ch, `"token":"`+subToken(t, auth.SubscribeClaims{User: "u", Channel: ch, ExpireAt: &at})+`"`)
		if res["expires"] != true || jsonclient.Num(res["ttl"]) > 2 {
			t.Fatalf("subscribe %s: %v", ch, res)
		}
	}
	m := c.Call(`{"id":4,"sub_refresh":{"channel":"$pp:new","token":"` + subToken(t, auth.SubscribeClaims{User: "u", Channel: "$pp:new", ExpiresAt: time.Now().Add(time.Hour)}) + `"}}`)
	if jsonclient.Path(m, "sub_refresh", "expires") != true {
		t.Fatalf("sub_refresh: %v", m)
	}
	push := c.Next()
	if jsonclient.Compact(t, push) != `{"push":{"channel":"$pp:old","unsubscribe":{"code":2501,"reason":"subscription expired"}}}` {
		t.Fatalf("want unsubscribe push 2501, got %v", push)
	}
	if time.Now().Unix() < at {
		t.Fatalf("unsubscribed before the subscription expired")
	}
	if _, err := n.hub.Publish(t.Context(), "$pp:new", []byte(`{"v":1}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.hub.Publish(t.Context(), "$pp:old", []byte(`{"v":1}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	msgs := c.Drain()
	if len(msgs) != 1 || len(jsonclient.PushesOf(msgs, "$pp:new", "pub")) != 1 {
		t.Fatalf("after expiry: %v", msgs)
	}
}
