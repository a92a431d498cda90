package hub_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

func TestPublishPermissions(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Client: hub.ClientConfig{AllowAnonymousConnectWithoutToken: true},
		Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
			ns("sub", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowSubscribeForAnonymous: true, AllowPublishForSubscriber: true}),
			ns("cl", hub.NamespaceOptions{AllowPublishForClient: true}),
			ns("an", hub.NamespaceOptions{AllowPublishForClient: true, AllowPublishForAnonymous: true}),
			ns("none", hub.NamespaceOptions{AllowSubscribeForClient: true}),
			ns("re", hub.NamespaceOptions{AllowPublishForClient: true, ChannelRegex: `^\d+$`}),
		}},
	})
	u := n.dial(t)
	u.Connect("u")
	anon := n.dial(t)
	anon.ConnectWith(`{}`)
	pub := func(c *rawClient, id int, ch string) map[string]any {
		t.Helper()
		return c.Call(`{"id":` + strconv.Itoa(id) + `,"publish":{"channel":"` + ch + `","data":{"v":1}}}`)
	}
	ok := func(m map[string]any) {
		t.Helper()
		if m["publish"] == nil {
			t.Fatalf("publish refused: %v", m)
		}
	}

	jsonclient.WantError(t, pub(u, 2, "sub:a"), 103) // not subscribed
	u.MustSubscribe(3, "sub:a", "")
	ok(pub(u, 4, "sub:a"))
	u.Call(`{"id":5,"unsubscribe":{"channel":"sub:a"}}`)
	jsonclient.WantError(t, pub(u, 6, "sub:a"), 103)
	// Anonymous subscribers also need allow_publish_for_anonymous.
	anon.MustSubscribe(2, "sub:a", "")
	jsonclient.WantError(t, pub(anon, 3, "sub:a"), 103)

	ok(pub(u, 7, "cl:a"))
	jsonclient.WantError(t, pub(anon, 4, "cl:a"), 103)
	ok(pub(u, 8, "an:a"))
	ok(pub(anon, 5, "an:a"))

	u.MustSubscribe(9, "none:a", "")
	jsonclient.WantError(t, pub(u, 10, "none:a"), 103)
	jsonclient.WantError(t, pub(u, 11, "nope:a"), 102)
	jsonclient.WantError(t, pub(u, 12, "re:abc"), 107)
	ok(pub(u, 13, "re:123"))

	t.Run("empty data closes with 3501", func(t *testing.T) {
		c := n.dial(t)
		c.Connect("u")
		c.Send(`{"id":2,"publish":{"channel":"cl:a"}}`)
		c.ExpectClose(3501, "bad request")
	})
	t.Run("empty channel closes with 3501", func(t *testing.T) {
		c := n.dial(t)
		c.Connect("u")
		c.Send(`{"id":2,"publish":{"data":{"v":1}}}`)
		c.ExpectClose(3501, "bad request")
	})
}

func TestPublishOffsetsAndInfo(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		ns("hist", hub.NamespaceOptions{
			AllowSubscribeForClient: true, AllowPublishForClient: true,
			HistorySize: 10, HistoryTTL: time.Minute,
		}),
		ns("plain", hub.NamespaceOptions{AllowSubscribeForClient: true, AllowPublishForClient: true}),
	}}})
	sub := n.dial(t)
	sub.Connect("reader")
	sub.MustSubscribe(2, "hist:a", "")
	sub.MustSubscribe(3, "plain:a", "")

	// The publisher is subscribed with a token that carries channel info.
	pubr := n.dial(t)
	id := pubr.ConnectToken(token(t, auth.ConnectClaims{User: "writer", Info: []byte(`{"name":"W"}`)}))["client"].(string)
	pubr.MustSubscribe(2, "hist:a", `"token":"`+subToken(t, auth.SubscribeClaims{User: "writer", Channel: "hist:a", Info: []byte(`{"seat":7}`)})+`"`)

	for i := 1; i <= 2; i++ {
		pubr.Send(`{"id":` + strconv.Itoa(10+i) + `,"publish":{"channel":"hist:a","data":{"n":` + strconv.Itoa(i) + `}}}`)
		// The publisher gets its own publication, before the reply.
		own := pubr.Next()
		if jsonclient.Num(jsonclient.Path(own, "push", "pub", "offset")) != int64(i) {
			t.Fatalf("own publication: %v", own)
		}
		if r := pubr.Next(); jsonclient.Num(r["id"]) != int64(10+i) || jsonclient.Compact(t, r["publish"]) != `{}` {
			t.Fatalf("publish reply: %v", r)
		}
	}
	pubr.Call(`{"id":20,"publish":{"channel":"plain:a","data":{"n":3}}}`)

	msgs := sub.Drain()
	hist := jsonclient.PushesOf(msgs, "hist:a", "pub")
	if len(hist) != 2 {
		t.Fatalf("publications in hist:a: %v", msgs)
	}
	wantInfo := `{"chan_info":{"seat":7},"client":"` + id + `","conn_info":{"name":"W"},"user":"writer"}`
	for i, p := range hist {
		if jsonclient.Num(p["offset"]) != int64(i+1) || jsonclient.Compact(t, p["data"]) != `{"n":`+strconv.Itoa(i+1)+`}` || jsonclient.Compact(t, p["info"]) != wantInfo {
			t.Fatalf("publication %d: %v", i, p)
		}
	}
	plain := jsonclient.PushesOf(msgs, "plain:a", "pub")
	if len(plain) != 1 {
		t.Fatalf("publications in plain:a: %v", msgs)
	}
	if _, has := plain[0]["offset"]; has {
		t.Fatalf("offset without history: %v", plain[0])
	}
	// Not subscribed to plain:a: no chan_info.
	if jsonclient.Compact(t, plain[0]["info"]) != `{"client":"`+id+`","conn_info":{"name":"W"},"user":"writer"}` {
		t.Fatalf("info of an unsubscribed publisher: %v", plain[0])
	}
}
