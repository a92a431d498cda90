package auth_test

import (
	"crypto/elliptic"
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
)

// The connection rate target is 20,000 connects/s per node, so HS256
// connection-token verification is the hot path measured here.

func benchConnect(b *testing.B, v *auth.Verifier, tok string) {
	b.Helper()
	if _, err := v.VerifyConnectToken(tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.VerifyConnectToken(tok); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyConnectTokenHS256(b *testing.B) {
	tok, err := hmacSigner(b).ConnectToken(auth.ConnectClaims{User: "1234567", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	benchConnect(b, hmacVerifier(b), tok)
}

func BenchmarkVerifyConnectTokenHS256Rich(b *testing.B) {
	tok, err := hmacSigner(b).ConnectToken(auth.ConnectClaims{
		User:      "1234567",
		ExpiresAt: time.Now().Add(time.Hour),
		Info:      json.RawMessage(`{"name":"Alexander","avatar":"https://example.com/a.png"}`),
		Channels:  []string{"news", "user#1234567"},
		Audience:  "herald",
		Issuer:    "backend",
	})
	if err != nil {
		b.Fatal(err)
	}
	benchConnect(b, newVerifier(b, auth.Config{HMACSecretKey: testSecret, Audience: "herald", Issuer: "backend"}), tok)
}

func BenchmarkVerifyConnectTokenHS256Parallel(b *testing.B) {
	tok, err := hmacSigner(b).ConnectToken(auth.ConnectClaims{User: "1234567", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	v := hmacVerifier(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := v.VerifyConnectToken(tok); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkVerifySubscribeTokenHS256(b *testing.B) {
	tok, err := hmacSigner(b).SubscribeToken(auth.SubscribeClaims{User: "1234567", Channel: "$private", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	v := hmacVerifier(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.VerifySubscribeToken(tok); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyConnectTokenRS256(b *testing.B) {
	rk := newRSAKey(b)
	s, err := auth.NewSigner("RS256", rk.privPEM)
	if err != nil {
		b.Fatal(err)
	}
	tok, err := s.ConnectToken(auth.ConnectClaims{User: "1234567", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	benchConnect(b, newVerifier(b, auth.Config{RSAPublicKey: rk.pubPEM}), tok)
}

func BenchmarkVerifyConnectTokenES256(b *testing.B) {
	ek := newECKey(b, elliptic.P256())
	s, err := auth.NewSigner("ES256", ek.privPEM)
	if err != nil {
		b.Fatal(err)
	}
	tok, err := s.ConnectToken(auth.ConnectClaims{User: "1234567", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	benchConnect(b, newVerifier(b, auth.Config{ECDSAPublicKey: ek.pubPEM}), tok)
}
