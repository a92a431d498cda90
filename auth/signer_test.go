package auth_test

import (
	"crypto/elliptic"
	"strings"
	"testing"

	"github.com/heraldhq/herald/auth"
)

func TestSignerErrors(t *testing.T) {
	rk := newRSAKey(t)
	ek := newECKey(t, elliptic.P384())
	cases := []struct {
		name string
		new  func() (*auth.Signer, error)
		why  string
	}{
		{"HMAC empty secret", func() (*auth.Signer, error) { return auth.NewHMACSigner("", "") }, "empty secret"},
		{"HMAC with RS alg", func() (*auth.Signer, error) { return auth.NewHMACSigner("s", "RS256") }, "unsupported algorithm"},
		{"none", func() (*auth.Signer, error) { return auth.NewSigner("none", "") }, "unsupported signing algorithm"},
		{"PS256", func() (*auth.Signer, error) { return auth.NewSigner("PS256", rk.privPEM) }, "unsupported signing algorithm"},
		{"empty alg", func() (*auth.Signer, error) { return auth.NewSigner("", "s") }, "unsupported signing algorithm"},
		{"RS with garbage", func() (*auth.Signer, error) { return auth.NewSigner("RS256", "garbage") }, "parse RSA private key"},
		{"RS with EC key", func() (*auth.Signer, error) { return auth.NewSigner("RS256", ek.privPEM) }, "parse RSA private key"},
		{"ES with RSA key", func() (*auth.Signer, error) { return auth.NewSigner("ES384", rk.privPEM) }, "parse ECDSA private key"},
		{"ES256 with P-384 key", func() (*auth.Signer, error) { return auth.NewSigner("ES256", ek.privPEM) }, "can only sign ES384"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.new()
			if err == nil {
				t.Fatalf("got signer %v", s)
			}
			if !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("error %q should say %q", err, tc.why)
			}
		})
	}
}

func TestSignerRejectsBadInput(t *testing.T) {
	s := hmacSigner(t)
	if _, err := s.SubscribeToken(auth.SubscribeClaims{User: "u"}); err == nil {
		t.Fatal("subscription token without channel was minted")
	}
	if _, err := s.ConnectToken(auth.ConnectClaims{Info: []byte("{not json")}); err == nil {
		t.Fatal("token with invalid info JSON was minted")
	}
}

func TestHMACSignerDefaultsToHS256(t *testing.T) {
	if alg := hmacSigner(t).Alg(); alg != "HS256" {
		t.Fatalf("Alg() = %s", alg)
	}
}
