// Package testcerts makes throwaway certificate authorities and
// certificates for tests of TLS listeners, written as PEM files.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority for one test.
type CA struct {
	t    testing.TB
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// File is the CA certificate as a PEM file.
	File string
	// Pool holds the CA certificate, for clients' RootCAs.
	Pool *x509.CertPool
}

// NewCA makes a CA named name, its certificate written in t.TempDir().
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{t: t, cert: cert, key: key, Pool: x509.NewCertPool()}
	ca.Pool.AddCert(cert)
	ca.File = writePEM(t, name+"-ca.pem", "CERTIFICATE", der)
	return ca
}

// Pair is a certificate and its key as PEM files.
type Pair struct {
	CertFile, KeyFile string
	// Cert is the pair loaded, for a client's Certificates.
	Cert tls.Certificate
	// Serial identifies the certificate in a connection's state.
	Serial *big.Int
}

// Server issues a server certificate for 127.0.0.1, ::1 and localhost
// under name.
func (ca *CA) Server(name string) Pair {
	return ca.issue(name, x509.ExtKeyUsageServerAuth, time.Now().Add(12*time.Hour))
}

// ServerFor issues a server certificate for exactly names (IP addresses
// become IP SANs, the others DNS SANs), for tests that check a client
// refuses a name the certificate does not carry; name is the files' base
// name.
func (ca *CA) ServerFor(name string, names ...string) Pair {
	ca.t.Helper()
	var sans []any
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			sans = append(sans, ip)
		} else {
			sans = append(sans, n)
		}
	}
	return ca.issueFor(name, x509.ExtKeyUsageServerAuth, time.Now().Add(12*time.Hour), sans)
}

// Client issues a client certificate with common name name.
func (ca *CA) Client(name string) Pair {
	return ca.issue(name, x509.ExtKeyUsageClientAuth, time.Now().Add(12*time.Hour))
}

// Expired issues a server certificate that expired an hour ago.
func (ca *CA) Expired(name string) Pair {
	return ca.issue(name, x509.ExtKeyUsageServerAuth, time.Now().Add(-time.Hour))
}

func (ca *CA) issue(name string, usage x509.ExtKeyUsage, notAfter time.Time) Pair {
	var sans []any
	if usage == x509.ExtKeyUsageServerAuth {
		sans = []any{"localhost", net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	return ca.issueFor(name, usage, notAfter, sans)
}

// issueFor issues a certificate whose subject alternative names are sans
// (net.IP or DNS name strings).
func (ca *CA) issueFor(name string, usage x509.ExtKeyUsage, notAfter time.Time, sans []any) Pair {
	t := ca.t
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-2 * time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	for _, san := range sans {
		switch v := san.(type) {
		case net.IP:
			tmpl.IPAddresses = append(tmpl.IPAddresses, v)
		case string:
			tmpl.DNSNames = append(tmpl.DNSNames, v)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p := Pair{
		CertFile: writePEM(t, name+".pem", "CERTIFICATE", der),
		KeyFile:  writePEM(t, name+"-key.pem", "PRIVATE KEY", kder),
		Serial:   tmpl.SerialNumber,
	}
	p.Cert, err = tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func writePEM(t testing.TB, name, typ string, der []byte) string {
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Replace overwrites the files of dst with those of src (a rotation in
// place) and moves their modification time forward by a second, so that
// the change shows even on file systems with coarse timestamps.
func Replace(t testing.TB, dst, src Pair) {
	t.Helper()
	later := time.Now().Add(time.Second)
	for _, f := range [][2]string{{dst.CertFile, src.CertFile}, {dst.KeyFile, src.KeyFile}} {
		data, err := os.ReadFile(f[1])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[0], data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f[0], later, later); err != nil {
			t.Fatal(err)
		}
	}
}
