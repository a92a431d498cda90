package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
)

func TestNewVerifierKeyErrors(t *testing.T) {
	rk := newRSAKey(t)
	ek := newECKey(t, elliptic.P256())
	pkcs1Priv := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk.priv)}))
	corrupt := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte("not DER")}))
	cases := []struct {
		name  string
		cfg   auth.Config
		field string // Config field the error must name
		why   string // part of the reason
	}{
		{"RSA not PEM", auth.Config{RSAPublicKey: "hello"}, "RSAPublicKey", "no PEM block"},
		{"RSA private key", auth.Config{RSAPublicKey: rk.privPEM}, "RSAPublicKey", "not the private key"},
		{"RSA PKCS1 private key", auth.Config{RSAPublicKey: pkcs1Priv}, "RSAPublicKey", "RSA PRIVATE KEY"},
		{"RSA holds an EC key", auth.Config{RSAPublicKey: ek.pubPEM}, "RSAPublicKey", "not a valid RSA public key"},
		{"RSA corrupt DER", auth.Config{RSAPublicKey: corrupt}, "RSAPublicKey", "parse RSA public key"},
		{"ECDSA not PEM", auth.Config{ECDSAPublicKey: "hello"}, "ECDSAPublicKey", "no PEM block"},
		{"ECDSA private key", auth.Config{ECDSAPublicKey: ek.privPEM}, "ECDSAPublicKey", "not the private key"},
		{"ECDSA holds an RSA key", auth.Config{ECDSAPublicKey: rk.pubPEM}, "ECDSAPublicKey", "not a valid ECDSA public key"},
		{"ECDSA corrupt DER", auth.Config{ECDSAPublicKey: corrupt}, "ECDSAPublicKey", "parse ECDSA public key"},
		{"good HMAC, bad RSA", auth.Config{HMACSecretKey: "s", RSAPublicKey: "x"}, "RSAPublicKey", "no PEM block"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := auth.NewVerifier(tc.cfg)
			if err == nil {
				t.Fatalf("NewVerifier succeeded: %v", v)
			}
			if !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("error %q should name %s and say %q", err, tc.field, tc.why)
			}
		})
	}
}

func TestNewVerifierAcceptsCertificates(t *testing.T) {
	ek := newECKey(t, elliptic.P256())
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &ek.priv.PublicKey, ek.priv)
	if err != nil {
		t.Fatal(err)
	}
	cert := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	v := newVerifier(t, auth.Config{ECDSAPublicKey: cert})
	s, err := auth.NewSigner("ES256", ek.privPEM)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.ConnectToken(auth.ConnectClaims{User: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifyConnectToken(tok); err != nil {
		t.Fatal(err)
	}
}

func TestNewVerifierUnsupportedCurve(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, err = auth.NewVerifier(auth.Config{ECDSAPublicKey: publicPEM(t, &k.PublicKey)})
	if err == nil || !strings.Contains(err.Error(), "ECDSAPublicKey") || !strings.Contains(err.Error(), "P-224") {
		t.Fatalf("error = %v, want unsupported curve P-224 on ECDSAPublicKey", err)
	}
}
