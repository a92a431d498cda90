package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testtoken"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// TestUserIDHTTPHeader: with client.user_id_http_header a connection
// without a token is the user the header names (the API disconnects it by
// that user); without the header it is refused as before.
func TestUserIDHTTPHeader(t *testing.T) {
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Client.UserIDHTTPHeader = "X-User-Id"
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	url := "ws://" + s.Addr() + WebSocketPath
	d := &gws.Dialer{HandshakeTimeout: 5 * time.Second}

	c := jsonclient.New(t, wire.WebSocket(wire.DialWith(t, d, url, http.Header{"X-User-Id": {"alice"}}), protocol.TypeJSON), "secret")
	if m := c.ConnectWith(`{}`); m["connect"] == nil {
		t.Fatalf("connect with the header: %v, want connected", m)
	}
	apiCall(t, s, "disconnect", `{"user":"alice"}`)
	c.ExpectClose(3503, "")

	anon := jsonclient.New(t, wire.Dial(t, url, protocol.TypeJSON), "secret")
	anon.Send(`{"id":1,"connect":{}}`)
	anon.ExpectClose(3501, "")
}

// TestInsecureSkipTokenSignatureVerify: a token signed with another key is
// refused (3500), unless client.insecure_skip_token_signature_verify,
// which still checks its claims (an expired one gets 109).
func TestInsecureSkipTokenSignatureVerify(t *testing.T) {
	forged := testtoken.Connect(t, "not-the-server-secret", auth.ConnectClaims{User: "mallory"})
	expired := testtoken.Connect(t, "not-the-server-secret", auth.ConnectClaims{User: "mallory", ExpiresAt: time.Now().Add(-time.Minute)})
	for _, skip := range []bool{false, true} {
		cfg := config.Default()
		cfg.Client.InsecureSkipTokenSignatureVerify = skip
		s := startServer(t, cfg)
		t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
		c := jsonclient.New(t, wire.Dial(t, "ws://"+s.Addr()+WebSocketPath, protocol.TypeJSON), "secret")
		if !skip {
			c.Send(`{"id":1,"connect":{"token":"` + forged + `"}}`)
			c.ExpectClose(3500, "invalid token")
			continue
		}
		c.ConnectToken(forged)
		e := jsonclient.New(t, wire.Dial(t, "ws://"+s.Addr()+WebSocketPath, protocol.TypeJSON), "secret")
		if m := e.ConnectWith(`{"token":"` + expired + `"}`); m["error"] == nil {
			t.Errorf("expired token without signature check: %v, want error 109", m)
		}
	}
}

// TestConnectionRateLimit: client.connection_rate_limit N lets N new
// connections in at once and answers the next 503 before anything opens.
func TestConnectionRateLimit(t *testing.T) {
	cfg := config.Default()
	cfg.Client.ConnectionRateLimit = 2
	cfg.UniSSE.Enabled = true
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	connectClient(t, s, "a")
	connectClient(t, s, "b")
	// The bucket refills at one a second: the third attempt, right after,
	// finds it empty, on any transport.
	code, _ := httpStatus(t, http.MethodGet, "http://"+s.Addr()+UniSSEPath+"?cf_connect={}", "")
	if code != http.StatusServiceUnavailable {
		t.Errorf("third connection: %d, want 503", code)
	}
}
