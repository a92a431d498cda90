//go:build unix

package main

import (
	"crypto/tls"
	"regexp"
	"syscall"
	"testing"

	"github.com/heraldhq/herald/internal/test/testcerts"
)

// TestSIGHUPReloadsCertificates rotates the certificate files of a
// running `herald serve` and sends SIGHUP: new connections get the new
// certificate, and the log says so.
func TestSIGHUPReloadsCertificates(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	first, second := ca.Server("first"), ca.Server("second")
	cfg := writeFile(t, "client:\n  token:\n    hmac_secret_key: a-long-enough-test-secret\nhttp_api:\n  key: k\n"+
		"tls:\n  cert_file: "+first.CertFile+"\n  key_file: "+first.KeyFile+"\n")
	r := startServe(t, "--config", cfg)
	out := r.waitFor(t, "herald listening")
	m := regexp.MustCompile(`msg="herald listening" address=(\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no address in the log:\n%s", out)
	}
	serial := func() string {
		c, err := tls.Dial("tcp", m[1], &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
		if err != nil {
			t.Fatalf("handshake: %v", err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	if got := serial(); got != first.Serial.String() {
		t.Fatalf("serves %s, want %s", got, first.Serial)
	}
	testcerts.Replace(t, first, second)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "SIGHUP: TLS certificates reloaded")
	if got := serial(); got != second.Serial.String() {
		t.Fatalf("after SIGHUP serves %s, want %s", got, second.Serial)
	}
	r.stop(t)
}
