package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

const checkSecret = "0123456789abcdef0123456789abcdef"

func checkConfig(t *testing.T, extra string) string {
	return writeFile(t, "client:\n  token:\n    hmac_secret_key: \""+checkSecret+"\"\n"+extra+"http_api:\n  key: \""+checkSecret+"\"\n")
}

func TestTokenCheck(t *testing.T) {
	path := checkConfig(t, "")
	tok, _, err := run(t, "token", "--secret", checkSecret, "--user", "alice", "--info", `{"name":"Alice"}`)
	if err != nil {
		t.Fatal(err)
	}
	tok = strings.TrimSpace(tok)
	for _, args := range [][]string{{"token", "check", "-c", path, tok}, {"checktoken", "-c", path, tok}} {
		out, _, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args[:2], err)
		}
		var got struct {
			User string            `json:"user"`
			Info map[string]string `json:"info"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.User != "alice" || got.Info["name"] != "Alice" {
			t.Fatalf("%v printed %q (%v)", args[:2], out, err)
		}
	}
	sub, _, err := run(t, "token", "--secret", checkSecret, "--user", "alice", "--channel", "news")
	if err != nil {
		t.Fatal(err)
	}
	sub = strings.TrimSpace(sub)
	for _, args := range [][]string{{"token", "check", "--sub", "-c", path, sub}, {"checksubtoken", "-c", path, sub}} {
		out, _, err := run(t, args...)
		if err != nil || !strings.Contains(out, `"channel": "news"`) {
			t.Fatalf("%v: %q, %v", args[:2], out, err)
		}
	}

	expired, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(-time.Minute).Unix()}).SignedString([]byte(checkSecret))
	if err != nil {
		t.Fatal(err)
	}
	other := checkConfig(t, "")
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"wrong secret":          {[]string{"token", "check", "-c", writeFile(t, "client: {token: {hmac_secret_key: \"fedcba9876543210fedcba9876543210\"}}\n"), tok}, "signature is invalid"},
		"expired":               {[]string{"token", "check", "-c", other, strings.TrimSpace(expired)}, "token expired"},
		"subscription as conn":  {[]string{"checktoken", "-c", path, sub}, "must not contain a channel claim"},
		"connection as sub":     {[]string{"checksubtoken", "-c", path, tok}, "requires a channel claim"},
		"garbage":               {[]string{"token", "check", "-c", path, "a.b.c"}, "malformed"},
		"no key":                {[]string{"token", "check", "-c", writeFile(t, "log: {level: info}\n"), tok}, "no token key configured"},
		"no token":              {[]string{"token", "check", "-c", path}, "accepts 1 arg"},
		"subscription keys off": {[]string{"checksubtoken", "-c", checkConfig(t, "  subscription_token:\n    enabled: true\n    hmac_secret_key: \"fedcba9876543210fedcba9876543210\"\n"), sub}, "signature is invalid"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := run(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestTokenCheckJWKS: a token of an identity provider is checked against
// its key set, as the server would.
func TestTokenCheckJWKS(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &priv.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	}))
	defer srv.Close()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: priv, KeyID: "k1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]any{"sub": "idp|1", "uid": "42", "exp": time.Now().Add(time.Hour).Unix(), "iss": "https://tenant.idp.example/"})
	obj, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := obj.CompactSerialize()
	path := writeFile(t, "client:\n  token:\n    jwks_public_endpoint: "+srv.URL+"\n    user_id_claim: uid\n    issuer_regex: '^https://[a-z]+\\.idp\\.example/$'\n")
	out, _, err := run(t, "token", "check", "-c", path, tok)
	if err != nil || !strings.Contains(out, `"user": "42"`) {
		t.Fatalf("JWKS token: %q, %v", out, err)
	}
	bad := writeFile(t, "client:\n  token:\n    jwks_public_endpoint: "+srv.URL+"\n    issuer: https://other.example/\n")
	if _, _, err := run(t, "token", "check", "-c", bad, tok); err == nil || !strings.Contains(err.Error(), "issuer") {
		t.Fatalf("wrong issuer: %v", err)
	}
}

// TestTokenMintsWithSubscriptionKeys: with client.subscription_token
// enabled, `herald token --channel` signs with its key, and the server's
// verifier accepts the result.
func TestTokenMintsWithSubscriptionKeys(t *testing.T) {
	path := checkConfig(t, "  subscription_token:\n    enabled: true\n    hmac_secret_key: \"fedcba9876543210fedcba9876543210\"\n")
	tok, _, err := run(t, "token", "--config", path, "--user", "alice", "--channel", "news")
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := run(t, "checksubtoken", "-c", path, strings.TrimSpace(tok)); err != nil || !strings.Contains(out, `"channel": "news"`) {
		t.Fatalf("checksubtoken: %q, %v", out, err)
	}
	if _, _, err := run(t, "token", "--config", checkConfig(t, "  subscription_token:\n    enabled: true\n    jwks_public_endpoint: https://idp.example/jwks\n"), "--channel", "news"); err == nil || !strings.Contains(err.Error(), "client.subscription_token.hmac_secret_key") {
		t.Fatalf("no subscription HMAC key: %v", err)
	}
}

// TestTokenCheckCaps: checktoken prints a token's caps and a subscription
// token's allow, and names what is wrong with bad ones.
func TestTokenCheckCaps(t *testing.T) {
	path := checkConfig(t, "")
	sign := func(c jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(checkSecret))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	caps := []any{map[string]any{"channels": []string{"news:*"}, "match": "wildcard", "allow": []string{"sub", "hst"}}}
	out, _, err := run(t, "checktoken", "-c", path, sign(jwt.MapClaims{"sub": "alice", "caps": caps}))
	if err != nil || !strings.Contains(out, `"match": "wildcard"`) || !strings.Contains(out, `"news:*"`) {
		t.Fatalf("checktoken with caps: %q, %v", out, err)
	}
	out, _, err = run(t, "checksubtoken", "-c", path, sign(jwt.MapClaims{"sub": "alice", "channel": "news", "allow": []string{"prs", "pub"}}))
	if err != nil || !strings.Contains(strings.Join(strings.Fields(out), ""), `"allow":["pub","prs"]`) {
		t.Fatalf("checksubtoken with allow: %q, %v", out, err)
	}
	bad := []any{map[string]any{"channels": []string{"("}, "match": "regex", "allow": []string{"sub"}}}
	if _, _, err := run(t, "checktoken", "-c", path, sign(jwt.MapClaims{"sub": "alice", "caps": bad})); err == nil || !strings.Contains(err.Error(), "caps[0].channels[0]") {
		t.Fatalf("checktoken with a bad regex: %v", err)
	}
}
