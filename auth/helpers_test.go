package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
)

const testSecret = "test-secret-0123456789"

type rsaKey struct {
	priv    *rsa.PrivateKey
	privPEM string
	pubPEM  string
}

type ecKey struct {
	priv    *ecdsa.PrivateKey
	privPEM string
	pubPEM  string
}

func newRSAKey(t testing.TB) rsaKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return rsaKey{priv: k, privPEM: privatePEM(t, k), pubPEM: publicPEM(t, &k.PublicKey)}
}

func newECKey(t testing.TB, c elliptic.Curve) ecKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return ecKey{priv: k, privPEM: privatePEM(t, k), pubPEM: publicPEM(t, &k.PublicKey)}
}

func privatePEM(t testing.TB, k any) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func publicPEM(t testing.TB, k any) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// signRaw mints arbitrary claims with golang-jwt directly, for tokens the
// package's own Signer refuses to produce.
func signRaw(t testing.TB, m jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(m, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func hs256(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	return signRaw(t, jwt.SigningMethodHS256, []byte(testSecret), claims)
}

func newVerifier(t testing.TB, cfg auth.Config) *auth.Verifier {
	t.Helper()
	v, err := auth.NewVerifier(cfg)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v
}

func hmacVerifier(t testing.TB) *auth.Verifier {
	return newVerifier(t, auth.Config{HMACSecretKey: testSecret})
}

func hmacSigner(t testing.TB) *auth.Signer {
	t.Helper()
	s, err := auth.NewHMACSigner(testSecret, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantInvalid(t testing.TB, err error) {
	t.Helper()
	if !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("error = %v, want ErrInvalidToken", err)
	}
	if errors.Is(err, auth.ErrTokenExpired) {
		t.Fatalf("error = %v is also ErrTokenExpired", err)
	}
}

func wantExpired(t testing.TB, err error) {
	t.Helper()
	if !errors.Is(err, auth.ErrTokenExpired) {
		t.Fatalf("error = %v, want ErrTokenExpired", err)
	}
	if errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("error = %v is also ErrInvalidToken", err)
	}
}

func hourAgo() int64    { return time.Now().Add(-time.Hour).Unix() }
func inAnHour() int64   { return time.Now().Add(time.Hour).Unix() }
func ptr[T any](v T) *T { return &v }
