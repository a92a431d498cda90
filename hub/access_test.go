package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

func accessCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connectErr connects with tok and returns the error code of the reply,
// 0 for a connect result.
func connectErr(t *testing.T, c *rawClient, tok string) int {
	t.Helper()
	m := c.ConnectWith(`{"token":"` + tok + `"}`)
	if _, ok := m["connect"]; ok {
		return 0
	}
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	return int(code)
}

// A revoked token's connection is closed with 3005 and cannot connect
// again (109), while another token of the same user stays connected.
func TestRevokeToken(t *testing.T) {
	t.Parallel()
	n := startNode(t, accessConfig())
	iat := time.Now().Add(-time.Minute)
	revoked := token(t, auth.ConnectClaims{User: "u1", ID: "jti-1", IssuedAt: iat})
	a := n.dial(t)
	a.ConnectToken(revoked)
	b := n.dial(t)
	b.ConnectToken(token(t, auth.ConnectClaims{User: "u1", ID: "jti-2", IssuedAt: iat}))

	if err := n.hub.RevokeToken(accessCtx(t), "jti-1", time.Now().Add(time.Hour).Unix()); err != nil {
		t.Fatal(err)
	}
	a.ExpectClose(int(protocol.DisconnectExpired), "")
	if code := connectErr(t, n.dial(t), revoked); code != int(protocol.ErrorTokenExpired) {
		t.Fatalf("connect with a revoked token: error %d, want 109", code)
	}
	b.MustSubscribe(2, "news", "") // still served
	if err := n.hub.RevokeToken(accessCtx(t), "", 0); !isCode(err, protocol.ErrorBadRequest) {
		t.Fatalf("revoke without an id: %v, want 107", err)
	}
}

// Invalidating a user's tokens closes the connections whose token was
// issued earlier; a token issued later connects.
func TestInvalidateUserTokens(t *testing.T) {
	t.Parallel()
	n := startNode(t, accessConfig())
	old := token(t, auth.ConnectClaims{User: "u1", IssuedAt: time.Now().Add(-time.Hour)})
	a := n.dial(t)
	a.ConnectToken(old)
	other := n.dial(t)
	other.ConnectToken(token(t, auth.ConnectClaims{User: "u2", IssuedAt: time.Now().Add(-time.Hour)}))
	noIat := n.dial(t)
	noIat.Connect("u1")

	if err := n.hub.InvalidateUserTokens(accessCtx(t), "u1", time.Now().Add(-time.Minute).Unix(), 0, ""); err != nil {
		t.Fatal(err)
	}
	a.ExpectClose(int(protocol.DisconnectExpired), "")
	if code := connectErr(t, n.dial(t), old); code != int(protocol.ErrorTokenExpired) {
		t.Fatalf("connect with an invalidated token: error %d, want 109", code)
	}
	n.dial(t).ConnectToken(token(t, auth.ConnectClaims{User: "u1", IssuedAt: time.Now()}))
	other.MustSubscribe(2, "news", "")
	noIat.MustSubscribe(2, "news", "")
}

// A blocked user is disconnected with 3503 and refused at connect until
// unblocked; other users are not touched.
func TestBlockUser(t *testing.T) {
	t.Parallel()
	n := startNode(t, accessConfig())
	a := n.dial(t)
	a.Connect("bad")
	b := n.dial(t)
	b.Connect("good")
	if err := n.hub.BlockUser(accessCtx(t), "bad", 0); err != nil {
		t.Fatal(err)
	}
	a.ExpectClose(int(protocol.DisconnectForceNoReconnect), "user blocked")
	again := n.dial(t)
	again.Send(`{"id":1,"connect":{"token":"` + token(t, auth.ConnectClaims{User: "bad"}) + `"}}`)
	again.ExpectClose(int(protocol.DisconnectForceNoReconnect), "user blocked")
	b.MustSubscribe(2, "news", "")

	if err := n.hub.UnblockUser(accessCtx(t), "bad"); err != nil {
		t.Fatal(err)
	}
	n.dial(t).Connect("bad")
	if err := n.hub.BlockUser(accessCtx(t), "bad", time.Now().Add(-time.Second).Unix()); !isCode(err, protocol.ErrorBadRequest) {
		t.Fatalf("block until a past time: %v, want 107", err)
	}
}

// Invalidating a user's subscription tokens of one channel ends the
// user's subscriptions to it with 2501 (subscribe again) and refuses the
// old token; a newer token subscribes.
func TestInvalidateSubscriptionTokens(t *testing.T) {
	t.Parallel()
	n := startNode(t, accessConfig())
	c := n.dial(t)
	c.Connect("u1")
	const ch = "$secret"
	old := subToken(t, auth.SubscribeClaims{User: "u1", Channel: ch, IssuedAt: time.Now().Add(-time.Hour)})
	c.MustSubscribe(2, ch, `"token":"`+old+`"`)
	if err := n.hub.InvalidateUserTokens(accessCtx(t), "u1", 0, 0, ch); err != nil {
		t.Fatal(err)
	}
	push := c.Next()
	unsub, _ := push["push"].(map[string]any)["unsubscribe"].(map[string]any)
	if unsub == nil || unsub["code"] != float64(protocol.UnsubscribeExpired) {
		t.Fatalf("want an unsubscribe push with 2501, got %v", push)
	}
	m := c.Subscribe(3, ch, `"token":"`+old+`"`)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(protocol.ErrorTokenExpired) {
		t.Fatalf("subscribe with an invalidated token: %v, want error 109", m)
	}
	fresh := subToken(t, auth.SubscribeClaims{User: "u1", Channel: ch, IssuedAt: time.Now().Add(time.Second)})
	c.MustSubscribe(4, ch, `"token":"`+fresh+`"`)
}

func isCode(err error, code protocol.ErrorCode) bool { return protocol.HasCode(err, code) }

// accessConfig lets clients subscribe to channels without a namespace, so
// that a test can show a connection is still served.
func accessConfig() hub.Config {
	return hub.Config{Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true}}}
}

// User status: the API's update is read back in the order asked, a client
// marks its own user with the rpc when user_status_rpc is on, and delete
// forgets it.
func TestUserStatus(t *testing.T) {
	t.Parallel()
	cfg := accessConfig()
	cfg.Client.UserStatusRPC = true
	n := startNode(t, cfg)
	ctx := accessCtx(t)
	before := time.Now().Unix()
	if err := n.hub.UpdateUserStatus(ctx, []string{"ann"}, "away"); err != nil {
		t.Fatal(err)
	}
	c := n.dial(t)
	c.Connect("bob")
	if m := c.Call(`{"id":2,"rpc":{"method":"update_user_status"}}`); m["rpc"] == nil {
		t.Fatalf("rpc update_user_status: %v", m)
	}
	st, err := n.hub.GetUserStatus(ctx, []string{"bob", "nobody", "ann"})
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 3 || st[0].User != "bob" || st[0].Active < before || st[1].Active != 0 || st[2].State != "away" {
		t.Fatalf("statuses %+v", st)
	}
	if err := n.hub.DeleteUserStatus(ctx, []string{"ann"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := n.hub.GetUserStatus(ctx, []string{"ann"}); st[0].Active != 0 {
		t.Fatalf("after delete: %+v", st)
	}
	if _, err := n.hub.GetUserStatus(ctx, nil); !isCode(err, protocol.ErrorBadRequest) {
		t.Fatalf("no users: %v, want 107", err)
	}
}
