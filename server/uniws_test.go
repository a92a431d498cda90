package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/testtoken"
)

// startUniServer runs a node with uni_websocket on and the HTTP API.
func startUniServer(t *testing.T) *Server {
	t.Helper()
	cfg := config.Default()
	cfg.UniWebSocket.Enabled = true
	cfg.HTTPAPI.Key = "k"
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// dialUni opens a plain WebSocket to the uni_websocket endpoint.
func dialUni(t *testing.T, s *Server, query string) *gws.Conn {
	t.Helper()
	u := "ws://" + s.Addr() + UniWebSocketPath
	if query != "" {
		u += "?" + query
	}
	c, _, err := (&gws.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(u, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func uniToken(t *testing.T, claims auth.ConnectClaims) string {
	t.Helper()
	return testtoken.Connect(t, "secret", claims)
}

// uniPush is the part of a bare push the tests look at.
type uniPush struct {
	Channel string `json:"channel"`
	Connect *struct {
		Client string                     `json:"client"`
		Subs   map[string]json.RawMessage `json:"subs"`
	} `json:"connect"`
	Pub *struct {
		Data json.RawMessage `json:"data"`
	} `json:"pub"`
	Subscribe  *json.RawMessage `json:"subscribe"`
	Disconnect *struct {
		Code   uint32 `json:"code"`
		Reason string `json:"reason"`
	} `json:"disconnect"`
}

// nextPush reads pushes, one per text frame, skipping pings ({}), until
// one satisfies want.
func nextPush(t *testing.T, c *gws.Conn, what string, want func(*uniPush) bool) *uniPush {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		mt, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if mt != gws.TextMessage {
			t.Fatalf("message type %d, want text", mt)
		}
		if strings.Contains(string(b), "\n") {
			t.Fatalf("frame holds more than one push: %s", b)
		}
		p := &uniPush{}
		if err := json.Unmarshal(b, p); err != nil {
			t.Fatalf("push %s: %v", b, err)
		}
		if want(p) {
			return p
		}
	}
}

func TestUniWebSocketEndToEnd(t *testing.T) {
	s := startUniServer(t)
	c := dialUni(t, s, "")
	tok := uniToken(t, auth.ConnectClaims{User: "u1", Channels: []string{"news"}})
	if err := c.WriteMessage(gws.TextMessage, []byte(`{"token":"`+tok+`"}`)); err != nil {
		t.Fatal(err)
	}
	p := nextPush(t, c, "connect push", func(p *uniPush) bool { return p.Connect != nil })
	if p.Connect.Client == "" {
		t.Fatal("connect push without a client id")
	}
	if _, ok := p.Connect.Subs["news"]; !ok {
		t.Fatalf("connect push subs %v, want news (from the token's channels)", p.Connect.Subs)
	}
	// Anything the client sends now is ignored, as in Centrifugo.
	if err := c.WriteMessage(gws.TextMessage, []byte(`{"id":2,"publish":{"channel":"news","data":{}}}`)); err != nil {
		t.Fatal(err)
	}

	if r := apiCall(t, s, "publish", `{"channel":"news","data":{"text":"hello"}}`); strings.Contains(r, "error") {
		t.Fatalf("publish: %s", r)
	}
	p = nextPush(t, c, "publication in news", func(p *uniPush) bool { return p.Pub != nil })
	if p.Channel != "news" || string(p.Pub.Data) != `{"text":"hello"}` {
		t.Fatalf("publication %q %s", p.Channel, p.Pub.Data)
	}

	// A server-side subscription made through the API reaches the
	// connection, and so do the channel's publications.
	if r := apiCall(t, s, "subscribe", `{"channel":"other","user":"u1"}`); strings.Contains(r, "error") {
		t.Fatalf("subscribe: %s", r)
	}
	p = nextPush(t, c, "subscribe push", func(p *uniPush) bool { return p.Subscribe != nil })
	if p.Channel != "other" {
		t.Fatalf("subscribe push for %q, want other", p.Channel)
	}
	if r := apiCall(t, s, "publish", `{"channel":"other","data":[1,2]}`); strings.Contains(r, "error") {
		t.Fatalf("publish: %s", r)
	}
	p = nextPush(t, c, "publication in other", func(p *uniPush) bool { return p.Pub != nil })
	if p.Channel != "other" || string(p.Pub.Data) != `[1,2]` {
		t.Fatalf("publication %q %s", p.Channel, p.Pub.Data)
	}

	// A server-side disconnect: a disconnect push, then the close frame
	// with the same code.
	if r := apiCall(t, s, "disconnect", `{"user":"u1","disconnect":{"code":4500,"reason":"bye"}}`); strings.Contains(r, "error") {
		t.Fatalf("disconnect: %s", r)
	}
	p = nextPush(t, c, "disconnect push", func(p *uniPush) bool { return p.Disconnect != nil })
	if p.Disconnect.Code != 4500 || p.Disconnect.Reason != "bye" {
		t.Fatalf("disconnect push %+v", p.Disconnect)
	}
	expectCloseCode(t, c, 4500)
}

func TestUniWebSocketConnectParam(t *testing.T) {
	s := startUniServer(t)
	tok := uniToken(t, auth.ConnectClaims{User: "u2", Channels: []string{"news"}})
	c := dialUni(t, s, "cf_connect="+url.QueryEscape(`{"token":"`+tok+`"}`))
	nextPush(t, c, "connect push", func(p *uniPush) bool { return p.Connect != nil })

	// A cf_connect that is not a connect request is refused before the
	// upgrade.
	r, err := http.Get("http://" + s.Addr() + UniWebSocketPath + "?cf_connect=" + url.QueryEscape(`"x"`))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", r.StatusCode)
	}
}

func TestUniWebSocketRefused(t *testing.T) {
	s := startUniServer(t)
	cases := []struct {
		name string
		msg  string
		code int
	}{
		{"bad connect request", `{"token":`, 3501},
		{"expired token", `{"token":"` + uniToken(t, auth.ConnectClaims{User: "u3", ExpiresAt: time.Now().Add(-time.Minute)}) + `"}`, 3005},
		{"invalid token", `{"token":"not-a-jwt"}`, 3500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialUni(t, s, "")
			if err := c.WriteMessage(gws.TextMessage, []byte(tc.msg)); err != nil {
				t.Fatal(err)
			}
			expectCloseCode(t, c, tc.code)
		})
	}
}

func TestUniWebSocketDisabledByDefault(t *testing.T) {
	s := startServer(t, config.Default())
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	r, err := http.Get("http://" + s.Addr() + UniWebSocketPath)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d, want 404 while uni_websocket.enabled is false", r.StatusCode)
	}
}

// expectCloseCode reads until the close frame and checks its code; pushes
// before it (a disconnect push) are skipped.
func expectCloseCode(t *testing.T, c *gws.Conn, code int) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		ce, ok := err.(*gws.CloseError)
		if !ok {
			t.Fatalf("read: %v, want close %d", err, code)
		}
		if ce.Code != code {
			t.Fatalf("close %d (%q), want %d", ce.Code, ce.Text, code)
		}
		return
	}
}
