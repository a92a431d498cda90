package tlsconf

import (
	"crypto/tls"
	"os"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/test/testcerts"
)

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInlinePEM serves a certificate and checks client certificates
// against a CA given inline, as PEM text; Reload keeps them.
func TestInlinePEM(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	pair, client := ca.Server("inline"), ca.Client("client")
	cfg := Config{CertPEM: readFile(t, pair.CertFile), KeyPEM: readFile(t, pair.KeyFile), ClientCAPEM: readFile(t, ca.File), ClientAuth: "require"}
	if !cfg.Enabled() {
		t.Fatal("inline PEM alone does not enable TLS")
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	f, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := echoServer(t, f.TLSConfig())
	if c, err := dial(t, addr, &tls.Config{RootCAs: ca.Pool}); err == nil {
		// TLS 1.3 reports a refused client certificate on the first
		// read; an accepted connection would echo the line.
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("x\n")); err == nil {
			if _, err := c.Read(make([]byte, 2)); err == nil {
				t.Fatal("without a client certificate: served")
			}
		}
	}
	c := mustDial(t, addr, &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{client.Cert}})
	echo(t, c, "inline")
	want := servedSerial(c)
	if err := f.Reload(); err != nil {
		t.Fatalf("Reload of inline PEM: %v", err)
	}
	c = mustDial(t, addr, &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{client.Cert}})
	if got := servedSerial(c); got != want {
		t.Errorf("after Reload: serial %s, want %s", got, want)
	}
}
