package auth_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
)

func cachingVerifier(t *testing.T, cfg auth.Config) *auth.Verifier {
	t.Helper()
	cfg.ConnectTokenCacheSize = 100
	return newVerifier(t, cfg)
}

// A hit returns what a full verification returns, and what a caller does
// with its copy does not reach the next caller.
func TestCachedTokenIsACopy(t *testing.T) {
	v := cachingVerifier(t, auth.Config{HMACSecretKey: testSecret})
	tok := hs256(t, jwt.MapClaims{
		"sub": "42", "exp": inAnHour(), "info": json.RawMessage(`{"a":1}`), "meta": json.RawMessage(`{"m":1}`),
		"subs": map[string]any{"news": map[string]any{"info": json.RawMessage(`{"i":1}`), "override": map[string]any{"presence": map[string]bool{"value": true}}}},
	})
	first, err := v.VerifyConnectToken(tok)
	if err != nil {
		t.Fatal(err)
	}
	want, err := hmacVerifier(t).VerifyConnectToken(tok)
	if err != nil {
		t.Fatal(err)
	}
	first.Info[0], first.Meta[0] = 'X', 'X'
	first.Subs["news"].Info[0] = 'X'
	*first.Subs["news"].Override.Presence = false
	first.Subs["other"] = auth.SubOptions{}
	for range 2 {
		got, err := v.VerifyConnectToken(tok)
		if err != nil {
			t.Fatal(err)
		}
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want)
		if string(gotJSON) != string(wantJSON) {
			t.Fatalf("cached token = %s, want %s", gotJSON, wantJSON)
		}
		got.Info[0] = 'Y'
	}
}

// A new key (a new Verifier) does not accept what the old one cached, and
// the old one keeps refusing tokens of the new key.
func TestCacheAndKeyRotation(t *testing.T) {
	const newSecret = "rotated-secret-0123456789"
	old := cachingVerifier(t, auth.Config{HMACSecretKey: testSecret})
	rotated := cachingVerifier(t, auth.Config{HMACSecretKey: newSecret})
	oldTok := hs256(t, jwt.MapClaims{"sub": "42", "exp": inAnHour()})
	newTok := signRaw(t, jwt.SigningMethodHS256, []byte(newSecret), jwt.MapClaims{"sub": "42", "exp": inAnHour()})
	for range 2 { // the second round would be served from the caches
		if _, err := old.VerifyConnectToken(oldTok); err != nil {
			t.Fatal(err)
		}
		if _, err := rotated.VerifyConnectToken(newTok); err != nil {
			t.Fatal(err)
		}
		_, err := rotated.VerifyConnectToken(oldTok)
		wantInvalid(t, err)
		_, err = old.VerifyConnectToken(newTok)
		wantInvalid(t, err)
	}
}

// A changed configuration (here a required audience and issuer) applies to
// tokens the previous configuration's Verifier had cached.
func TestCacheAndChangedConfig(t *testing.T) {
	before := cachingVerifier(t, auth.Config{HMACSecretKey: testSecret})
	tok := hs256(t, jwt.MapClaims{"sub": "42", "exp": inAnHour()})
	for range 2 {
		if _, err := before.VerifyConnectToken(tok); err != nil {
			t.Fatal(err)
		}
	}
	after := cachingVerifier(t, auth.Config{HMACSecretKey: testSecret, Audience: "herald", Issuer: "backend"})
	_, err := after.VerifyConnectToken(tok)
	wantInvalid(t, err)
}

// A token whose exp passes while it is cached is refused, with the
// expired error, on the next connect.
func TestCachedTokenExpires(t *testing.T) {
	v := cachingVerifier(t, auth.Config{HMACSecretKey: testSecret})
	// exp is whole seconds: a token that ends at the next second boundary
	// expires within a second, with no sleep shorter than that needed.
	exp := time.Now().Add(time.Second).Truncate(time.Second)
	tok := hs256(t, jwt.MapClaims{"sub": "42", "exp": exp.Unix()})
	if _, err := v.VerifyConnectToken(tok); err != nil {
		if time.Now().Before(exp) {
			t.Fatal(err)
		}
		t.Skip("the machine was too slow to verify the token within its second")
	}
	time.Sleep(time.Until(exp))
	_, err := v.VerifyConnectToken(tok)
	wantExpired(t, err)
}

func TestCacheSizeMustNotBeNegative(t *testing.T) {
	if _, err := auth.NewVerifier(auth.Config{HMACSecretKey: testSecret, ConnectTokenCacheSize: -1}); err == nil {
		t.Fatal("negative ConnectTokenCacheSize accepted")
	}
}
