package httpstream

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
)

// uniEnv gives every connection the server-side subscription "news", as
// a token's channels claim would.
func uniEnv(t *testing.T) *env {
	return newEnv(t, Config{}, func(c *hub.Config) {
		c.Handlers.OnConnecting = func(_ context.Context, ev hub.ConnectEvent) (hub.ConnectReply, error) {
			return hub.ConnectReply{User: "u1", Subs: map[string]auth.SubOptions{"news": {}}}, nil
		}
	})
}

func TestUniHTTPStream(t *testing.T) {
	e := uniEnv(t)
	cs := e.open(http.MethodPost, pathUniHTTPStream, "application/json", []byte(`{"token":"anything","name":"curl"}`))
	checkUni(t, e, cs)
}

func TestUniSSE(t *testing.T) {
	e := uniEnv(t)
	t.Run("GET", func(t *testing.T) {
		checkUni(t, e, e.open(http.MethodGet, pathUniSSE+"?cf_connect="+urlEscape(`{"name":"es"}`), "", nil))
	})
	t.Run("GET without cf_connect", func(t *testing.T) {
		checkUni(t, e, e.open(http.MethodGet, pathUniSSE, "", nil))
	})
	t.Run("POST", func(t *testing.T) {
		checkUni(t, e, e.open(http.MethodPost, pathUniSSE, "application/json", []byte(`{}`)))
	})
}

// checkUni reads the connect push, a publication and the disconnect push
// a server-side disconnect sends, all as bare pushes.
func checkUni(t *testing.T, e *env, cs *clientStream) {
	t.Helper()
	p := cs.push()
	if p.Connect == nil || p.Connect.Client == "" {
		t.Fatalf("first push %+v, want the connect push", p)
	}
	if _, ok := p.Connect.Subs["news"]; !ok {
		t.Fatalf("connect push subs %v, want news", p.Connect.Subs)
	}
	if p.Connect.Session != "" {
		t.Errorf("unidirectional connect push has session %q, want none", p.Connect.Session)
	}
	publish(t, e, "news", `{"text":"hi"}`)
	p = cs.push()
	if p.Pub == nil || p.Channel != "news" || string(p.Pub.Data) != `{"text":"hi"}` {
		t.Fatalf("push %+v, want the publication on news", p)
	}
	if err := e.hub.DisconnectUser(context.Background(), "u1", "", nil, 4000, "bye"); err != nil {
		t.Fatalf("disconnect: %v", err)
	}
	p = cs.push()
	if p.Disconnect == nil || p.Disconnect.Code != 4000 || p.Disconnect.Reason != "bye" {
		t.Fatalf("push %+v, want the disconnect push 4000 bye", p)
	}
	cs.expectEOF()
}

// TestUniRawFormat pins the bytes curl -N shows, as docs/protocol.md
// describes them.
func TestUniRawFormat(t *testing.T) {
	e := uniEnv(t)
	cs := e.open(http.MethodPost, pathUniHTTPStream, "application/json", nil)
	line := string(cs.next())
	if !strings.HasPrefix(line, `{"connect":{"client":"`) {
		t.Fatalf("first line %s, want {\"connect\":{\"client\":…", line)
	}
	publish(t, e, "news", `{"n":1}`)
	if got := string(cs.next()); !strings.HasPrefix(got, `{"channel":"news","pub":{"data":{"n":1}`) {
		t.Fatalf("line %s, want {\"channel\":\"news\",\"pub\":{\"data\":{\"n\":1}…", got)
	}
}

func TestUniRefusedConnect(t *testing.T) {
	e := newEnv(t, Config{}, func(c *hub.Config) {
		c.Client = hub.ClientConfig{} // no token verifier, no anonymous access
	})
	cs := e.open(http.MethodPost, pathUniHTTPStream, "application/json", []byte(`{"token":"x"}`))
	p := cs.push()
	if p.Disconnect == nil || p.Disconnect.Code != 3500 {
		t.Fatalf("push %+v, want the disconnect push 3500 (invalid token)", p)
	}
	cs.expectEOF()
}
