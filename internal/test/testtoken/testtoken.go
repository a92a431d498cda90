// Package testtoken mints the connection and subscription tokens Herald's
// tests present, signed with a shared secret (HMAC, HS256), so the JSON
// and the Protobuf test clients and the tests that build their own
// commands sign them the same way.
//
// It is for tests only: it fails the test instead of returning an error.
package testtoken

import (
	"testing"

	"github.com/heraldhq/herald/auth"
)

// Connect mints a connection token with claims, signed with secret.
func Connect(t testing.TB, secret string, claims auth.ConnectClaims) string {
	t.Helper()
	tok, err := signer(t, secret).ConnectToken(claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Subscribe mints a subscription token with claims, signed with secret.
func Subscribe(t testing.TB, secret string, claims auth.SubscribeClaims) string {
	t.Helper()
	tok, err := signer(t, secret).SubscribeToken(claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func signer(t testing.TB, secret string) *auth.Signer {
	t.Helper()
	s, err := auth.NewHMACSigner(secret, "HS256")
	if err != nil {
		t.Fatal(err)
	}
	return s
}
