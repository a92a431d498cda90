package auth_test

import (
	"crypto/elliptic"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
)

func TestEveryAlgorithmFamily(t *testing.T) {
	rk := newRSAKey(t)
	eks := map[string]ecKey{
		"ES256": newECKey(t, elliptic.P256()),
		"ES384": newECKey(t, elliptic.P384()),
		"ES512": newECKey(t, elliptic.P521()),
	}
	for _, alg := range []string{"HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "ES256", "ES384", "ES512"} {
		t.Run(alg, func(t *testing.T) {
			cfg := auth.Config{HMACSecretKey: testSecret, RSAPublicKey: rk.pubPEM}
			key := testSecret
			switch alg[:2] {
			case "RS":
				key = rk.privPEM
			case "ES":
				cfg.ECDSAPublicKey = eks[alg].pubPEM
				key = eks[alg].privPEM
			}
			s, err := auth.NewSigner(alg, key)
			if err != nil {
				t.Fatal(err)
			}
			if s.Alg() != alg {
				t.Fatalf("Alg() = %s", s.Alg())
			}
			v := newVerifier(t, cfg)

			tok, err := s.ConnectToken(auth.ConnectClaims{User: "u-" + alg, ExpiresAt: time.Now().Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			ct, err := v.VerifyConnectToken(tok)
			if err != nil {
				t.Fatalf("VerifyConnectToken: %v", err)
			}
			if ct.User != "u-"+alg {
				t.Fatalf("User = %q", ct.User)
			}

			tok, err = s.SubscribeToken(auth.SubscribeClaims{User: "u", Channel: "ch-" + alg})
			if err != nil {
				t.Fatal(err)
			}
			st, err := v.VerifySubscribeToken(tok)
			if err != nil {
				t.Fatalf("VerifySubscribeToken: %v", err)
			}
			if st.Channel != "ch-"+alg {
				t.Fatalf("Channel = %q", st.Channel)
			}
		})
	}
}

func TestWrongKey(t *testing.T) {
	rk, otherRK := newRSAKey(t), newRSAKey(t)
	ek, otherEK := newECKey(t, elliptic.P256()), newECKey(t, elliptic.P256())
	v := newVerifier(t, auth.Config{HMACSecretKey: testSecret, RSAPublicKey: rk.pubPEM, ECDSAPublicKey: ek.pubPEM})
	claims := jwt.MapClaims{"sub": "u"}
	for name, tok := range map[string]string{
		"hmac":  signRaw(t, jwt.SigningMethodHS256, []byte("other-secret"), claims),
		"rsa":   signRaw(t, jwt.SigningMethodRS256, otherRK.priv, claims),
		"ecdsa": signRaw(t, jwt.SigningMethodES256, otherEK.priv, claims),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := v.VerifyConnectToken(tok)
			wantInvalid(t, err)
			_, err = v.VerifySubscribeToken(tok)
			wantInvalid(t, err)
		})
	}
}

func TestWrongAlgorithm(t *testing.T) {
	rk := newRSAKey(t)
	ek256, ek384 := newECKey(t, elliptic.P256()), newECKey(t, elliptic.P384())
	rsaOnly := newVerifier(t, auth.Config{RSAPublicKey: rk.pubPEM})
	rsaAndHMAC := newVerifier(t, auth.Config{RSAPublicKey: rk.pubPEM, HMACSecretKey: testSecret})
	ecOnly := newVerifier(t, auth.Config{ECDSAPublicKey: ek256.pubPEM})
	hmacOnly := hmacVerifier(t)
	claims := jwt.MapClaims{"sub": "u"}
	// The classic confusion: the attacker knows the public key and uses its
	// PEM text as an HMAC secret.
	confused := signRaw(t, jwt.SigningMethodHS256, []byte(rk.pubPEM), claims)

	cases := []struct {
		name string
		v    *auth.Verifier
		tok  string
	}{
		{"HS256 with only RSA configured", rsaOnly, hs256(t, claims)},
		{"RSA public key as HMAC secret, only RSA configured", rsaOnly, confused},
		{"RSA public key as HMAC secret, RSA and HMAC configured", rsaAndHMAC, confused},
		{"RS256 with only HMAC configured", hmacOnly, signRaw(t, jwt.SigningMethodRS256, rk.priv, claims)},
		{"PS256 with RSA configured", rsaOnly, signRaw(t, jwt.SigningMethodPS256, rk.priv, claims)},
		{"ES256 with only RSA configured", rsaOnly, signRaw(t, jwt.SigningMethodES256, ek256.priv, claims)},
		{"ES384 with a P-256 key configured", ecOnly, signRaw(t, jwt.SigningMethodES384, ek384.priv, claims)},
		{"none", hmacOnly, signRaw(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims)},
		{"none with a signature appended", hmacOnly, signRaw(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims) + "c2ln"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.v.VerifyConnectToken(tc.tok)
			wantInvalid(t, err)
		})
	}
}

func TestExpiry(t *testing.T) {
	v := hmacVerifier(t)
	expired := hs256(t, jwt.MapClaims{"sub": "u", "exp": hourAgo()})

	t.Run("expired", func(t *testing.T) {
		_, err := v.VerifyConnectToken(expired)
		wantExpired(t, err)
		_, err = v.VerifySubscribeToken(hs256(t, jwt.MapClaims{"sub": "u", "channel": "c", "exp": hourAgo()}))
		wantExpired(t, err)
	})
	t.Run("expired one second ago, no leeway", func(t *testing.T) {
		_, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"exp": time.Now().Unix() - 1}))
		wantExpired(t, err)
	})
	t.Run("expired with bad signature is invalid", func(t *testing.T) {
		parts := strings.Split(expired, ".")
		sig := []byte(parts[2])
		sig[0] ^= 1 // still valid base64url, different bytes
		_, err := v.VerifyConnectToken(parts[0] + "." + parts[1] + "." + string(sig))
		wantInvalid(t, err)
		forged := signRaw(t, jwt.SigningMethodHS256, []byte("other"), jwt.MapClaims{"exp": hourAgo()})
		_, err = v.VerifyConnectToken(forged)
		wantInvalid(t, err)
	})
	t.Run("expired with a channel claim is invalid", func(t *testing.T) {
		_, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"channel": "c", "exp": hourAgo()}))
		wantInvalid(t, err)
	})
	t.Run("expired subscription without channel is invalid", func(t *testing.T) {
		_, err := v.VerifySubscribeToken(hs256(t, jwt.MapClaims{"exp": hourAgo()}))
		wantInvalid(t, err)
	})
	t.Run("expired with wrong audience is invalid", func(t *testing.T) {
		va := newVerifier(t, auth.Config{HMACSecretKey: testSecret, Audience: "herald"})
		_, err := va.VerifyConnectToken(hs256(t, jwt.MapClaims{"aud": "other", "exp": hourAgo()}))
		wantInvalid(t, err)
	})
	t.Run("nbf in the future is invalid", func(t *testing.T) {
		_, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"nbf": inAnHour()}))
		wantInvalid(t, err)
	})
	t.Run("nbf in the past is fine", func(t *testing.T) {
		if _, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"nbf": hourAgo()})); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("iat in the future is not checked", func(t *testing.T) {
		if _, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"iat": inAnHour()})); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("exp of wrong type is invalid", func(t *testing.T) {
		_, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"exp": "tomorrow"}))
		wantInvalid(t, err)
	})
}

func TestAudienceAndIssuer(t *testing.T) {
	unchecked := hmacVerifier(t)
	checked := newVerifier(t, auth.Config{HMACSecretKey: testSecret, Audience: "herald", Issuer: "backend"})
	cases := []struct {
		name   string
		claims jwt.MapClaims
		ok     bool
	}{
		{"both match", jwt.MapClaims{"aud": "herald", "iss": "backend"}, true},
		{"aud as array", jwt.MapClaims{"aud": []string{"x", "herald"}, "iss": "backend"}, true},
		{"aud mismatch", jwt.MapClaims{"aud": "other", "iss": "backend"}, false},
		{"aud missing", jwt.MapClaims{"iss": "backend"}, false},
		{"iss mismatch", jwt.MapClaims{"aud": "herald", "iss": "other"}, false},
		{"iss missing", jwt.MapClaims{"aud": "herald"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok := hs256(t, tc.claims)
			_, err := checked.VerifyConnectToken(tok)
			if tc.ok && err != nil {
				t.Fatalf("checked: %v", err)
			}
			if !tc.ok {
				wantInvalid(t, err)
			}
			tc.claims["channel"] = "c"
			_, err = checked.VerifySubscribeToken(hs256(t, tc.claims))
			if tc.ok && err != nil {
				t.Fatalf("checked subscribe: %v", err)
			}
			if !tc.ok {
				wantInvalid(t, err)
			}
			delete(tc.claims, "channel")
			if _, err := unchecked.VerifyConnectToken(tok); err != nil {
				t.Fatalf("unchecked verifier rejected: %v", err)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	v := hmacVerifier(t)
	good := hs256(t, jwt.MapClaims{"sub": "u"})
	parts := strings.Split(good, ".")
	b64 := base64.RawURLEncoding.EncodeToString
	for name, tok := range map[string]string{
		"empty":                  "",
		"garbage":                "garbage",
		"two segments":           parts[0] + "." + parts[1],
		"four segments":          good + ".x",
		"three empty segments":   "..",
		"bad base64 header":      "!!!." + parts[1] + "." + parts[2],
		"header not JSON":        b64([]byte("nope")) + "." + parts[1] + "." + parts[2],
		"claims not JSON":        parts[0] + "." + b64([]byte("nope")) + "." + parts[2],
		"claims an array":        parts[0] + "." + b64([]byte("[1]")) + "." + parts[2],
		"no alg":                 b64([]byte(`{"typ":"JWT"}`)) + "." + parts[1] + "." + parts[2],
		"unknown alg":            b64([]byte(`{"alg":"XX1"}`)) + "." + parts[1] + "." + parts[2],
		"signature garbage":      parts[0] + "." + parts[1] + ".***",
		"signature empty":        parts[0] + "." + parts[1] + ".",
		"sub not a string":       hs256(t, jwt.MapClaims{"sub": 5}),
		"channels not an array":  hs256(t, jwt.MapClaims{"channels": "a"}),
		"expire_at not a number": hs256(t, jwt.MapClaims{"expire_at": "soon"}),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := v.VerifyConnectToken(tok)
			wantInvalid(t, err)
			_, err = v.VerifySubscribeToken(tok)
			wantInvalid(t, err)
		})
	}
}

func TestNoKeyConfigured(t *testing.T) {
	v := newVerifier(t, auth.Config{Audience: "herald"})
	tok := hs256(t, jwt.MapClaims{"sub": "u"})
	_, err := v.VerifyConnectToken(tok)
	wantInvalid(t, err)
	if !strings.Contains(err.Error(), "no token key configured") {
		t.Fatalf("error = %v", err)
	}
	_, err = v.VerifySubscribeToken(tok)
	wantInvalid(t, err)
}

func TestConcurrentUse(t *testing.T) {
	v := hmacVerifier(t)
	s := hmacSigner(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			user := string(rune('a' + i))
			for range 200 {
				tok, err := s.ConnectToken(auth.ConnectClaims{User: user})
				if err != nil {
					errs <- err
					return
				}
				ct, err := v.VerifyConnectToken(tok)
				if err != nil {
					errs <- err
					return
				}
				if ct.User != user {
					t.Errorf("User = %q, want %q", ct.User, user)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
