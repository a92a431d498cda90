package server

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/test/testtoken"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// TestJWKSAndSubscriptionTokenKeys: a node configured with an identity
// provider's key set over HTTPS (its CA in client.token.jwks_tls) accepts
// the provider's connection tokens, refuses a kid the set lacks with 3500
// while other clients stay connected, verifies subscription tokens with
// client.subscription_token's key only, and reports the key set in its
// metrics.
func TestJWKSAndSubscriptionTokenKeys(t *testing.T) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ca := testcerts.NewCA(t, "idp")
	var fetches atomic.Int64
	idp := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &priv.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	}))
	idp.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server("idp").Cert}}
	idp.StartTLS()
	defer idp.Close()

	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Client.Token.JWKSPublicEndpoint = idp.URL + "/jwks"
	cfg.Client.Token.JWKSTLS.CAFile = ca.File
	cfg.Client.SubscriptionToken.Enabled = true
	cfg.Client.SubscriptionToken.HMACSecretKey = "subscription-secret"
	s := startServer(t, cfg)
	defer func() { _ = s.Shutdown(context.Background()) }()

	mint := func(kid string, key *rsa.PrivateKey, claims map[string]any) string {
		t.Helper()
		sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		payload, _ := json.Marshal(claims)
		obj, err := sig.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		tok, _ := obj.CompactSerialize()
		return tok
	}
	dial := func() *jsonclient.Client {
		return jsonclient.New(t, wire.Dial(t, "ws://"+s.Addr()+WebSocketPath, protocol.TypeJSON), "secret")
	}

	alice := dial()
	if res := alice.ConnectToken(mint("k1", priv, map[string]any{"sub": "alice", "exp": time.Now().Add(time.Hour).Unix()})); res["client"] == nil {
		t.Fatalf("connect: %v", res)
	}
	// The connection key (client.token's "secret") does not sign
	// subscription tokens once they have keys of their own.
	wrong := testtoken.Subscribe(t, "secret", auth.SubscribeClaims{User: "alice", Channel: "news"})
	jsonclient.WantError(t, alice.Subscribe(2, "news", `"token":"`+wrong+`"`), 103)
	right := testtoken.Subscribe(t, "subscription-secret", auth.SubscribeClaims{User: "alice", Channel: "news"})
	alice.MustSubscribe(3, "news", `"token":"`+right+`"`)

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{
		mint("k2", other, map[string]any{"sub": "eve"}), // kid not in the set
		mint("k1", other, map[string]any{"sub": "eve"}), // the set's kid, another key
	} {
		eve := dial()
		eve.Send(`{"id":1,"connect":{"token":"` + tok + `"}}`)
		eve.ExpectClose(3500, "invalid token")
	}
	// alice is still served.
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+"/api/publish", strings.NewReader(`{"channel":"news","data":{"n":1}}`))
	req.Header.Set("X-API-Key", "k")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("publish: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if m := alice.Next(); jsonclient.Compact(t, jsonclient.Path(m, "push", "pub", "data")) != `{"n":1}` {
		t.Fatalf("alice after the refused clients: %v", m)
	}

	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, re := range []string{`(?m)^herald_jwks_up\{token="client.token"\} 1$`, `(?m)^herald_jwks_keys\{token="client.token"\} 1$`} {
		if !regexp.MustCompile(re).Match(body) {
			t.Errorf("metrics lack %s", re)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("fetches = %d, want 1: the unknown kid came within the minimum refresh interval", n)
	}
}
