package hub_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// openChannels lets authenticated clients subscribe and publish to channels
// without a namespace.
func openChannels() hub.ChannelConfig {
	return hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
		AllowSubscribeForClient: true,
		AllowPublishForClient:   true,
	}}
}

// anonymousConfig is a node whose clients connect without a token and may
// subscribe to any channel without a namespace, with cc's settings; an
// hour between pings unless cc says otherwise, so that no ping comes
// between what a test writes and what it awaits.
func anonymousConfig(cc hub.ClientConfig) hub.Config {
	channels := openChannels()
	channels.WithoutNamespace.AllowSubscribeForAnonymous = true
	cc.AllowAnonymousConnectWithoutToken = true
	if cc.PingInterval == 0 {
		cc.PingInterval = time.Hour
	}
	return hub.Config{Channels: channels, Client: cc}
}

func TestConnectHS256(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Version: "9.9.9"})
	c := n.dial(t)
	res := c.Connect("alice")
	if id, _ := res["client"].(string); !uuidRe.MatchString(id) {
		t.Fatalf("client id %v", res["client"])
	}
	if res["version"] != "9.9.9" || jsonclient.Num(res["ping"]) != 25 || res["pong"] != true {
		t.Fatalf("connect result %v", res)
	}
	if _, ok := res["expires"]; ok {
		t.Fatalf("a token without exp must not expire: %v", res)
	}
	testenv.Eventually(t, "one client", 5*time.Second, func() bool { return n.hub.NumClients() == 1 && n.hub.NumUsers() == 1 })
}

// pemBlock encodes der as PEM.
func pemBlock(typ string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

func TestConnectRS256AndES256(t *testing.T) {
	t.Parallel()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der := func(k any) []byte {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pub := func(k any) []byte {
		b, err := x509.MarshalPKIXPublicKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	v, err := auth.NewVerifier(auth.Config{
		RSAPublicKey:   pemBlock("PUBLIC KEY", pub(&rsaKey.PublicKey)),
		ECDSAPublicKey: pemBlock("PUBLIC KEY", pub(&ecKey.PublicKey)),
	})
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, hub.Config{Tokens: v})
	for _, tc := range []struct{ alg, key string }{
		{"RS256", pemBlock("PRIVATE KEY", der(rsaKey))},
		{"ES256", pemBlock("PRIVATE KEY", der(ecKey))},
	} {
		t.Run(tc.alg, func(t *testing.T) {
			s, err := auth.NewSigner(tc.alg, tc.key)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := s.ConnectToken(auth.ConnectClaims{User: "u-" + tc.alg})
			if err != nil {
				t.Fatal(err)
			}
			c := n.dial(t)
			c.ConnectToken(tok)
		})
	}
	t.Run("HS256 refused without an HMAC key", func(t *testing.T) {
		c := n.dial(t)
		c.Send(`{"id":1,"connect":{"token":"` + token(t, auth.ConnectClaims{User: "x"}) + `"}}`)
		c.ExpectClose(3500, "invalid token")
	})
}

func TestConnectExpiredToken(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Client: hub.ClientConfig{StaleCloseDelay: 500 * time.Millisecond}})
	expired := token(t, auth.ConnectClaims{User: "u", ExpiresAt: time.Now().Add(-time.Minute)})

	t.Run("later commands close with 3501", func(t *testing.T) {
		t.Parallel()
		c := n.dial(t)
		m := c.ConnectWith(`{"token":"` + expired + `"}`)
		jsonclient.WantError(t, m, 109)
		if jsonclient.Path(m, "error", "message") != "token expired" {
			t.Fatalf("error message: %v", m)
		}
		c.Send(`{"id":2,"subscribe":{"channel":"chat"}}`)
		c.ExpectClose(3501, "bad request: connect was refused; open a new connection")
	})
	t.Run("a new connect closes with 3501", func(t *testing.T) {
		t.Parallel()
		c := n.dial(t)
		jsonclient.WantError(t, c.ConnectWith(`{"token":"`+expired+`"}`), 109)
		c.Send(`{"id":2,"connect":{"token":"` + token(t, auth.ConnectClaims{User: "u"}) + `"}}`)
		c.ExpectClose(3501, "bad request: connect was refused; open a new connection")
	})
	t.Run("stale close", func(t *testing.T) {
		t.Parallel()
		c := n.dial(t)
		jsonclient.WantError(t, c.ConnectWith(`{"token":"`+expired+`"}`), 109)
		c.ExpectClose(3502, "stale")
	})
}

func TestConnectInvalidSignature(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{})
	s, err := auth.NewHMACSigner("another-secret", "HS256")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.ConnectToken(auth.ConnectClaims{User: "u"})
	if err != nil {
		t.Fatal(err)
	}
	c := n.dial(t)
	c.Send(`{"id":1,"connect":{"token":"` + tok + `"}}`)
	c.ExpectClose(3500, "invalid token")

	c = n.dial(t)
	c.Send(`{"id":1,"connect":{"token":"not.a.jwt"}}`)
	c.ExpectClose(3500, "invalid token")
}

func TestConnectWithoutToken(t *testing.T) {
	t.Parallel()
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		n := startNode(t, hub.Config{})
		c := n.dial(t)
		c.Send(`{"id":1,"connect":{}}`)
		c.ExpectClose(3501, "bad request: connect without a token, and anonymous connections are not allowed")
	})
	t.Run("anonymous allowed", func(t *testing.T) {
		t.Parallel()
		n := startNode(t, hub.Config{
			Client: hub.ClientConfig{AllowAnonymousConnectWithoutToken: true},
			Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
				AllowSubscribeForClient: true, AllowSubscribeForAnonymous: true,
				Presence: true, AllowPresenceForClient: true, AllowPresenceForAnonymous: true,
			}},
		})
		c := n.dial(t)
		m := c.ConnectWith(`{}`)
		if _, ok := m["connect"]; !ok {
			t.Fatalf("anonymous connect: %v", m)
		}
		c.MustSubscribe(2, "room", "")
		pres := c.Call(`{"id":3,"presence":{"channel":"room"}}`)
		for _, v := range jsonclient.Path(pres, "presence", "presence").(map[string]any) {
			if u := jsonclient.Path(v.(map[string]any), "user"); u != "" {
				t.Fatalf("anonymous user in presence: %v", pres)
			}
		}
	})
}

func TestConnectAnonymousTokens(t *testing.T) {
	t.Parallel()
	anon := token(t, auth.ConnectClaims{User: ""})
	t.Run("allowed by default", func(t *testing.T) {
		t.Parallel()
		n := startNode(t, hub.Config{})
		n.dial(t).ConnectToken(anon)
	})
	t.Run("disallowed", func(t *testing.T) {
		t.Parallel()
		n := startNode(t, hub.Config{Client: hub.ClientConfig{DisallowAnonymousConnectionTokens: true}})
		c := n.dial(t)
		c.Send(`{"id":1,"connect":{"token":"` + anon + `"}}`)
		c.ExpectClose(3507, "permission denied")
		// A token with a user still connects.
		n.dial(t).Connect("u")
	})
}

func TestConnectInsecure(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Client: hub.ClientConfig{Insecure: true},
		Channels: hub.ChannelConfig{
			WithoutNamespace: hub.NamespaceOptions{HistorySize: 10, HistoryTTL: time.Minute, Presence: true},
			Namespaces:       []hub.Namespace{{Name: "ul", NamespaceOptions: hub.NamespaceOptions{AllowUserLimitedChannels: true}}},
		},
	})
	c := n.dial(t)
	if m := c.ConnectWith(`{}`); m["connect"] == nil {
		t.Fatalf("insecure connect without token: %v", m)
	}
	// No namespace permission is set, yet everything is allowed.
	c.MustSubscribe(2, "anything", "")
	if m := c.Call(`{"id":3,"publish":{"channel":"anything","data":{"a":1}}}`); m["publish"] == nil {
		t.Fatalf("insecure publish: %v", m)
	}
	if m := c.Call(`{"id":4,"history":{"channel":"anything","limit":-1}}`); m["history"] == nil {
		t.Fatalf("insecure history: %v", m)
	}
	if m := c.Call(`{"id":5,"presence":{"channel":"anything"}}`); m["presence"] == nil {
		t.Fatalf("insecure presence: %v", m)
	}
	// Private channels still need a token.
	jsonclient.WantError(t, c.Subscribe(6, "$private", ""), 103)

	t.Run("token expiry is ignored", func(t *testing.T) {
		c := n.dial(t)
		res := c.ConnectToken(token(t, auth.ConnectClaims{User: "u", ExpiresAt: time.Now().Add(time.Hour)}))
		if res["expires"] != nil || res["ttl"] != nil {
			t.Fatalf("insecure mode must not expire connections (reference forces ExpireAt 0): %v", res)
		}
	})
	t.Run("user-limited channel of other users", func(t *testing.T) {
		c := n.dial(t)
		c.Connect("u1")
		c.MustSubscribe(2, "ul:dialog#u2,u3", "")
	})
}

func TestConnectTwice(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{})
	c := n.dial(t)
	c.Connect("u")
	c.Send(`{"id":2,"connect":{"token":"` + token(t, auth.ConnectClaims{User: "u"}) + `"}}`)
	c.ExpectClose(3501, "bad request: already connected")
}

func TestCommandBeforeConnect(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: openChannels()})
	first := "bad request: the first command must be connect"
	for _, tc := range []struct{ cmd, reason string }{
		{`{"id":1,"subscribe":{"channel":"chat"}}`, first},
		{`{"id":1,"publish":{"channel":"chat","data":{}}}`, first},
		{`{"id":1,"rpc":{"method":"m"}}`, first},
		{`{"send":{"data":{}}}`, first},
		// Without an id a connect is a pong, and there is no ping to
		// answer: the reference's plain 3501.
		{`{"connect":{"token":"` + token(t, auth.ConnectClaims{User: "u"}) + `"}}`, "bad request"},
	} {
		c := n.dial(t)
		c.Send(tc.cmd)
		c.ExpectClose(3501, tc.reason)
	}
}

func TestConnectExpiry(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{})
	t.Run("exp gives expires and ttl", func(t *testing.T) {
		c := n.dial(t)
		res := c.ConnectToken(token(t, auth.ConnectClaims{User: "u", ExpiresAt: time.Now().Add(time.Hour)}))
		if res["expires"] != true {
			t.Fatalf("expires: %v", res)
		}
		if ttl := jsonclient.Num(res["ttl"]); ttl < 3590 || ttl > 3600 {
			t.Fatalf("ttl %d, want about 3600", ttl)
		}
	})
	t.Run("expire_at wins over exp", func(t *testing.T) {
		c := n.dial(t)
		at := time.Now().Add(2 * time.Hour).Unix()
		res := c.ConnectToken(token(t, auth.ConnectClaims{User: "u", ExpiresAt: time.Now().Add(time.Hour), ExpireAt: &at}))
		if ttl := jsonclient.Num(res["ttl"]); ttl < 7190 || ttl > 7200 {
			t.Fatalf("ttl %d, want about 7200", ttl)
		}
	})
	t.Run("expire_at 0 never expires", func(t *testing.T) {
		c := n.dial(t)
		res := c.ConnectToken(token(t, auth.ConnectClaims{User: "u", ExpiresAt: time.Now().Add(time.Hour), ExpireAt: ptr(int64(0))}))
		if res["expires"] != nil {
			t.Fatalf("expires: %v", res)
		}
	})
	t.Run("expire_at in the past is error 110", func(t *testing.T) {
		c := n.dial(t)
		m := c.ConnectWith(`{"token":"` + token(t, auth.ConnectClaims{User: "u", ExpireAt: ptr(time.Now().Add(-time.Minute).Unix())}) + `"}`)
		jsonclient.WantError(t, m, 110)
	})
}

// historyNS is a namespace with history and forced recovery.
func historyNS(name string) hub.Namespace {
	return hub.Namespace{Name: name, NamespaceOptions: hub.NamespaceOptions{
		HistorySize: 100, HistoryTTL: time.Minute, ForceRecovery: true,
		AllowSubscribeForClient: true, AllowPublishForSubscriber: true,
	}}
}

func TestConnectServerSideChannels(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		historyNS("ss"),
		{Name: "plain"},
	}}})
	ctx := context.Background()
	if _, err := n.hub.Publish(ctx, "ss:a", []byte(`{"n":1}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	c := n.dial(t)
	res := c.ConnectToken(token(t, auth.ConnectClaims{User: "u", Channels: []string{"ss:a", "plain:b"}}))
	subs, _ := res["subs"].(map[string]any)
	if len(subs) != 2 {
		t.Fatalf("connect subs: %v", res)
	}
	a := subs["ss:a"].(map[string]any)
	if a["recoverable"] != true || a["positioned"] != true || jsonclient.Num(a["offset"]) != 1 || a["epoch"] == nil {
		t.Fatalf("subs[ss:a]: %v", a)
	}
	if b := subs["plain:b"].(map[string]any); len(b) != 0 {
		t.Fatalf("subs[plain:b]: %v", b)
	}
	// Publications reach both server-side subscriptions, with the channel
	// in the push.
	if _, err := n.hub.Publish(ctx, "ss:a", []byte(`{"n":2}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.hub.Publish(ctx, "plain:b", []byte(`{"n":3}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	msgs := c.Drain()
	if p := jsonclient.PushesOf(msgs, "ss:a", "pub"); len(p) != 1 || jsonclient.Num(p[0]["offset"]) != 2 || jsonclient.Compact(t, p[0]["data"]) != `{"n":2}` {
		t.Fatalf("pubs in ss:a: %v", msgs)
	}
	if p := jsonclient.PushesOf(msgs, "plain:b", "pub"); len(p) != 1 || p[0]["offset"] != nil {
		t.Fatalf("pubs in plain:b: %v", msgs)
	}
	testenv.Eventually(t, "two subscriptions", 5*time.Second, func() bool { return n.hub.NumSubscriptions() == 2 })

	t.Run("unknown namespace in the token", func(t *testing.T) {
		c := n.dial(t)
		jsonclient.WantError(t, c.ConnectWith(`{"token":"`+token(t, auth.ConnectClaims{User: "u", Channels: []string{"nope:x"}})+`"}`), 102)
	})
}

// TestConnectTokenSubs: the subs claim makes server-side subscriptions
// with channel info and data, and replaces the channels claim, as in
// Centrifugo's token verifier.
func TestConnectTokenSubs(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{historyNS("ss"), {Name: "plain"}}}})
	c := n.dial(t)
	res := c.ConnectToken(token(t, auth.ConnectClaims{
		User:     "u",
		Channels: []string{"plain:b"},
		Subs:     map[string]auth.SubClaims{"ss:a": {Info: []byte(`{"seat":1}`), Data: []byte(`{"init":true}`)}},
	}))
	subs, _ := res["subs"].(map[string]any)
	if len(subs) != 1 || subs["ss:a"] == nil {
		t.Fatalf("connect subs (channels must be ignored when subs is set): %v", res)
	}
	if d := jsonclient.Compact(t, jsonclient.Path(subs, "ss:a", "data")); d != `{"init":true}` {
		t.Fatalf("subs[ss:a].data = %s: %v", d, subs)
	}
	c.Call(`{"id":2,"publish":{"channel":"ss:a","data":{"x":1}}}`)
	p := jsonclient.PushesOf(c.Drain(), "ss:a", "pub")
	if len(p) != 1 || jsonclient.Compact(t, jsonclient.Path(p[0], "info", "chan_info")) != `{"seat":1}` {
		t.Fatalf("publication in a token sub: %v", p)
	}
}

func TestConnectChannelLimit(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Client: hub.ClientConfig{ChannelLimit: 2}})
	c := n.dial(t)
	c.Send(`{"id":1,"connect":{"token":"` + token(t, auth.ConnectClaims{User: "u", Channels: []string{"a", "b", "c"}}) + `"}}`)
	c.ExpectClose(3505, "channel limit")
}

func TestConnectInfo(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{
		AllowSubscribeForClient: true, AllowPublishForSubscriber: true,
		Presence: true, AllowPresenceForSubscriber: true,
	}}})
	c := n.dial(t)
	res := c.ConnectToken(token(t, auth.ConnectClaims{User: "u", Info: []byte(`{"name":"Alice"}`)}))
	id := res["client"].(string)
	c.MustSubscribe(2, "room", "")
	pres := c.Call(`{"id":3,"presence":{"channel":"room"}}`)
	want := `{"client":"` + id + `","conn_info":{"name":"Alice"},"user":"u"}`
	if got := jsonclient.Compact(t, jsonclient.Path(pres, "presence", "presence", id)); got != want {
		t.Fatalf("presence entry %s, want %s", got, want)
	}
	c.Send(`{"id":4,"publish":{"channel":"room","data":{"x":1}}}`)
	c.Reply(4)
	p := jsonclient.PushesOf(c.Drain(), "room", "pub")
	if len(p) != 1 || jsonclient.Compact(t, p[0]["info"]) != want {
		t.Fatalf("publication info: %v", p)
	}
}

func TestConnectSubsRecovery(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{
		historyNS("ss"),
		{Name: "closed", NamespaceOptions: hub.NamespaceOptions{HistorySize: 10, HistoryTTL: time.Minute, ForceRecovery: true}},
	}}})
	ctx := context.Background()
	var epoch string
	for i := 1; i <= 3; i++ {
		sp, err := n.hub.Publish(ctx, "ss:a", []byte(`{"n":`+strconv.Itoa(i)+`}`), hub.PublishOptions{})
		if err != nil {
			t.Fatal(err)
		}
		epoch = sp.Epoch
	}
	for _, ch := range []string{"ss:free", "closed:x"} {
		if _, err := n.hub.Publish(ctx, ch, []byte(`{"n":1}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("token channel recovers", func(t *testing.T) {
		c := n.dial(t)
		tok := token(t, auth.ConnectClaims{User: "u", Channels: []string{"ss:a"}})
		m := c.ConnectWith(`{"token":"` + tok + `","subs":{"ss:a":{"recover":true,"offset":1,"epoch":"` + epoch + `"}}}`)
		a, _ := jsonclient.Path(m, "connect", "subs", "ss:a").(map[string]any)
		if a["recovered"] != true || a["was_recovering"] != true || jsonclient.Num(a["offset"]) != 1 || a["epoch"] != epoch {
			t.Fatalf("subs[ss:a]: %v", m)
		}
		pubs, _ := a["publications"].([]any)
		if len(pubs) != 2 || jsonclient.Num(pubs[0].(map[string]any)["offset"]) != 2 || jsonclient.Num(pubs[1].(map[string]any)["offset"]) != 3 {
			t.Fatalf("recovered publications: %v", pubs)
		}
	})
	t.Run("requested channels", func(t *testing.T) {
		c := n.dial(t)
		// ss:free may be subscribed by any client, so the server resumes it;
		// closed:x and $ss:p need a token and are silently left out.
		m := c.ConnectWith(`{"token":"` + token(t, auth.ConnectClaims{User: "u"}) + `","subs":{` +
			`"ss:free":{"recover":true,"offset":0,"epoch":"` + "" + `"},` +
			`"closed:x":{"recover":true},"$ss:p":{"recover":true}}}`)
		subs, _ := jsonclient.Path(m, "connect", "subs").(map[string]any)
		if len(subs) != 1 {
			t.Fatalf("connect subs: %v", m)
		}
		free := subs["ss:free"].(map[string]any)
		if free["recovered"] != true || len(free["publications"].([]any)) != 1 {
			t.Fatalf("subs[ss:free]: %v", free)
		}
	})
	t.Run("unknown namespace closes with 3501", func(t *testing.T) {
		c := n.dial(t)
		c.Send(`{"id":1,"connect":{"token":"` + token(t, auth.ConnectClaims{User: "u"}) + `","subs":{"nope:x":{"recover":true}}}}`)
		c.ExpectClose(3501, "bad request")
	})
}

func TestOnConnecting(t *testing.T) {
	t.Parallel()
	events := make(chan hub.ConnectEvent, 1)
	n := startNode(t, hub.Config{
		Channels: openChannels(),
		Handlers: hub.Handlers{OnConnecting: func(ctx context.Context, ev hub.ConnectEvent) (hub.ConnectReply, error) {
			switch ev.Token {
			case "reply":
				events <- ev
				return hub.ConnectReply{
					User: "app-user", Info: []byte(`{"i":1}`), Channels: []string{"news"},
					Data: []byte(`{"welcome":true}`), ExpireAt: time.Now().Add(time.Hour).Unix(),
				}, nil
			case "error":
				return hub.ConnectReply{}, &hub.Error{Code: 4001, Message: "custom refusal"}
			case "disconnect":
				return hub.ConnectReply{}, &hub.Disconnect{Code: 4501, Reason: "go away"}
			case "past":
				return hub.ConnectReply{User: "u", ExpireAt: time.Now().Add(-time.Minute).Unix()}, nil
			}
			return hub.ConnectReply{}, errors.New("backend down")
		}},
	})

	t.Run("ConnectReply", func(t *testing.T) {
		c := n.dial(t)
		m := c.ConnectWith(`{"token":"reply","data":{"d":1},"name":"js","version":"5.7","headers":{"h":"v"}}`)
		res, _ := m["connect"].(map[string]any)
		if jsonclient.Compact(t, res["data"]) != `{"welcome":true}` || res["expires"] != true || jsonclient.Path(res, "subs", "news") == nil {
			t.Fatalf("connect result: %v", m)
		}
		ev := recv(t, events, "the connect event")
		if string(ev.Data) != `{"d":1}` || ev.Name != "js" || ev.Version != "5.7" || ev.Headers["h"] != "v" || ev.ClientID != res["client"] {
			t.Fatalf("connect event: %+v", ev)
		}
		if _, err := n.hub.Publish(context.Background(), "news", []byte(`{"n":1}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
		if p := jsonclient.PushesOf(c.Drain(), "news", "pub"); len(p) != 1 {
			t.Fatalf("news publication: %v", p)
		}
		testenv.Eventually(t, "app-user indexed", 5*time.Second, func() bool { return n.hub.NumUsers() >= 1 })
	})
	t.Run("Error", func(t *testing.T) {
		c := n.dial(t)
		m := c.ConnectWith(`{"token":"error"}`)
		jsonclient.WantError(t, m, 4001)
		if jsonclient.Path(m, "error", "message") != "custom refusal" {
			t.Fatalf("error: %v", m)
		}
		c.Send(`{"id":2,"subscribe":{"channel":"news"}}`)
		c.ExpectClose(3501, "bad request: connect was refused; open a new connection")
	})
	t.Run("Disconnect", func(t *testing.T) {
		c := n.dial(t)
		c.Send(`{"id":1,"connect":{"token":"disconnect"}}`)
		c.ExpectClose(4501, "go away")
	})
	t.Run("ExpireAt in the past", func(t *testing.T) {
		c := n.dial(t)
		jsonclient.WantError(t, c.ConnectWith(`{"token":"past"}`), 110)
	})
	t.Run("other error is internal and leaves the connection unusable", func(t *testing.T) {
		c := n.dial(t)
		m := c.ConnectWith(`{"token":"other"}`)
		jsonclient.WantError(t, m, 100)
		if jsonclient.Path(m, "error", "temporary") != true {
			t.Fatalf("internal error must be temporary: %v", m)
		}
		c.Send(`{"id":2,"connect":{"token":"reply"}}`)
		c.ExpectClose(3501, "bad request: connect was refused; open a new connection")
	})
}
