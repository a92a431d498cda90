package auth_test

import (
	"crypto/elliptic"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
)

// TestPreviousKeys: during a rotation, tokens signed with the previous key
// of each family verify next to those of the current key until the
// previous key's validity ends; then only the current key's do.
func TestPreviousKeys(t *testing.T) {
	const oldSecret = "old-secret-0123456789abcdef"
	oldRSA, newRSA := newRSAKey(t), newRSAKey(t)
	oldEC, newEC := newECKey(t, elliptic.P256()), newECKey(t, elliptic.P256())
	c := jwt.MapClaims{"sub": "u", "exp": inAnHour()}
	tokens := map[string]struct{ current, previous string }{
		"HMAC":  {hs256(t, c), signRaw(t, jwt.SigningMethodHS256, []byte(oldSecret), c)},
		"RSA":   {signRaw(t, jwt.SigningMethodRS256, newRSA.priv, c), signRaw(t, jwt.SigningMethodRS512, oldRSA.priv, c)},
		"ECDSA": {signRaw(t, jwt.SigningMethodES256, newEC.priv, c), signRaw(t, jwt.SigningMethodES256, oldEC.priv, c)},
	}
	config := func(until time.Time) auth.Config {
		return auth.Config{
			HMACSecretKey: testSecret, HMACPreviousSecretKey: oldSecret, HMACPreviousSecretKeyValidUntil: until,
			RSAPublicKey: newRSA.pubPEM, RSAPreviousPublicKey: oldRSA.pubPEM, RSAPreviousPublicKeyValidUntil: until,
			ECDSAPublicKey: newEC.pubPEM, ECDSAPreviousPublicKey: oldEC.pubPEM, ECDSAPreviousPublicKeyValidUntil: until,
			ConnectTokenCacheSize: 100,
		}
	}
	for name, until := range map[string]time.Time{"no end": {}, "until tomorrow": time.Now().Add(24 * time.Hour)} {
		v := newVerifier(t, config(until))
		for fam, tok := range tokens {
			if _, err := v.VerifyConnectToken(tok.current); err != nil {
				t.Errorf("%s, %s: current key: %v", name, fam, err)
			}
			if _, err := v.VerifyConnectToken(tok.previous); err != nil {
				t.Errorf("%s, %s: previous key: %v", name, fam, err)
			}
		}
	}
	v := newVerifier(t, config(time.Now().Add(-time.Second)))
	for fam, tok := range tokens {
		if _, err := v.VerifyConnectToken(tok.current); err != nil {
			t.Errorf("%s: current key after the previous one expired: %v", fam, err)
		}
		_, err := v.VerifyConnectToken(tok.previous)
		wantInvalid(t, err)
	}
}

func TestPreviousKeysRefused(t *testing.T) {
	p256, p384 := newECKey(t, elliptic.P256()), newECKey(t, elliptic.P384())
	rsa := newRSAKey(t)
	for name, tc := range map[string]struct {
		cfg  auth.Config
		want string
	}{
		"HMAC previous alone":  {auth.Config{HMACPreviousSecretKey: "x"}, "HMACPreviousSecretKey"},
		"RSA previous alone":   {auth.Config{RSAPreviousPublicKey: rsa.pubPEM}, "RSAPreviousPublicKey"},
		"ECDSA previous alone": {auth.Config{ECDSAPreviousPublicKey: p256.pubPEM}, "ECDSAPreviousPublicKey"},
		"RSA previous private": {auth.Config{RSAPublicKey: rsa.pubPEM, RSAPreviousPublicKey: rsa.privPEM}, "RSAPreviousPublicKey"},
		"ECDSA other curve":    {auth.Config{ECDSAPublicKey: p256.pubPEM, ECDSAPreviousPublicKey: p384.pubPEM}, "curve"},
		"audience twice":       {auth.Config{HMACSecretKey: testSecret, Audience: "a", AudienceRegex: "a"}, "Audience"},
		"issuer twice":         {auth.Config{HMACSecretKey: testSecret, Issuer: "a", IssuerRegex: "a"}, "Issuer"},
		"bad audience regex":   {auth.Config{HMACSecretKey: testSecret, AudienceRegex: "("}, "AudienceRegex"},
		"bad issuer regex":     {auth.Config{HMACSecretKey: testSecret, IssuerRegex: "[a"}, "IssuerRegex"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := auth.NewVerifier(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewVerifier = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// TestPreviousKeyCacheBound: a connection token verified with the previous
// key is not answered from the cache once that key's validity has ended.
func TestPreviousKeyCacheBound(t *testing.T) {
	const oldSecret = "old-secret-0123456789abcdef"
	until := time.Now().Add(time.Hour)
	v := newVerifier(t, auth.Config{HMACSecretKey: testSecret, HMACPreviousSecretKey: oldSecret, HMACPreviousSecretKeyValidUntil: until, ConnectTokenCacheSize: 10})
	clk := &clock{now: time.Now()}
	auth.SetClock(v, clk.Now)
	old := signRaw(t, jwt.SigningMethodHS256, []byte(oldSecret), jwt.MapClaims{"sub": "u", "exp": time.Now().Add(2 * time.Hour).Unix()})
	cur := hs256(t, jwt.MapClaims{"sub": "u", "exp": time.Now().Add(2 * time.Hour).Unix()})
	for range 2 {
		if _, err := v.VerifyConnectToken(old); err != nil {
			t.Fatal(err)
		}
		if _, err := v.VerifyConnectToken(cur); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Hour)
	_, err := v.VerifyConnectToken(old)
	wantInvalid(t, err)
	if _, err := v.VerifyConnectToken(cur); err != nil {
		t.Fatalf("current key's token after the previous key's end: %v", err)
	}
}

// TestClaimRegex: aud and iss may be matched by regular expressions, as
// identity providers with one issuer per tenant need.
func TestClaimRegex(t *testing.T) {
	v := newVerifier(t, auth.Config{HMACSecretKey: testSecret, AudienceRegex: `^herald-(prod|staging)$`, IssuerRegex: `^https://[a-z]+\.idp\.example\.com/$`})
	ok := jwt.MapClaims{"sub": "u", "aud": []string{"other", "herald-prod"}, "iss": "https://acme.idp.example.com/"}
	if _, err := v.VerifyConnectToken(hs256(t, ok)); err != nil {
		t.Fatalf("matching aud and iss: %v", err)
	}
	if _, err := v.VerifySubscribeToken(hs256(t, jwt.MapClaims{"sub": "u", "channel": "c", "aud": "herald-staging", "iss": "https://x.idp.example.com/"})); err != nil {
		t.Fatalf("matching subscription token: %v", err)
	}
	for name, c := range map[string]jwt.MapClaims{
		"aud not matching": {"sub": "u", "aud": "herald-dev", "iss": "https://acme.idp.example.com/"},
		"aud absent":       {"sub": "u", "iss": "https://acme.idp.example.com/"},
		"iss not matching": {"sub": "u", "aud": "herald-prod", "iss": "https://acme.idp.example.com.evil/"},
		"iss absent":       {"sub": "u", "aud": "herald-prod"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := v.VerifyConnectToken(hs256(t, c))
			wantInvalid(t, err)
			c["channel"] = "c"
			_, err = v.VerifySubscribeToken(hs256(t, c))
			wantInvalid(t, err)
		})
	}
}

// TestUserIDClaim: the user comes from the configured claim instead of
// sub, for connection and subscription tokens.
func TestUserIDClaim(t *testing.T) {
	v := newVerifier(t, auth.Config{HMACSecretKey: testSecret, UserIDClaim: "user_id"})
	tok, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"sub": "auth0|abc", "user_id": "42"}))
	if err != nil || tok.User != "42" {
		t.Fatalf("connection token: %+v, %v; want user 42", tok, err)
	}
	st, err := v.VerifySubscribeToken(hs256(t, jwt.MapClaims{"sub": "auth0|abc", "user_id": "42", "channel": "c"}))
	if err != nil || st.User != "42" {
		t.Fatalf("subscription token: %+v, %v; want user 42", st, err)
	}
	// Without the claim (or with null) the user is anonymous, even with a
	// sub: Centrifugo reads the user from that claim only (VerifyConnectToken
	// and VerifySubscribeToken in its internal/jwtverify/token_verifier_jwt.go
	// take gjson's value of the claim, "" when absent, with no fallback).
	for _, c := range []jwt.MapClaims{{"sub": "auth0|abc"}, {"sub": "auth0|abc", "user_id": nil}} {
		tok, err = v.VerifyConnectToken(hs256(t, c))
		if err != nil || tok.User != "" {
			t.Fatalf("%v: %+v, %v; want the anonymous user", c, tok, err)
		}
	}
	st, err = v.VerifySubscribeToken(hs256(t, jwt.MapClaims{"sub": "auth0|abc", "channel": "c"}))
	if err != nil || st.User != "" {
		t.Fatalf("subscription token without the claim: %+v, %v; want the anonymous user", st, err)
	}
	for _, bad := range []any{42, true, []string{"42"}, map[string]any{"id": "42"}} {
		_, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"sub": "x", "user_id": bad}))
		wantInvalid(t, err)
		if !strings.Contains(err.Error(), "user_id") {
			t.Fatalf("error %q does not name the claim", err)
		}
	}
}
