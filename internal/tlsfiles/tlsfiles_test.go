package tlsfiles_test

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/tlsfiles"
)

// TestHandshake connects with the configuration the files make to a
// server that requires a client certificate from the same CA.
func TestHandshake(t *testing.T) {
	ca := testcerts.NewCA(t, "herald-test")
	srv := ca.ServerFor("server", "127.0.0.1")
	cli := ca.Client("client")
	serverCert, err := tls.LoadX509KeyPair(srv.CertFile, srv.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := tlsfiles.Files{CAFile: ca.File}.Config()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    roots.RootCAs,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			_, _ = c.Write([]byte("ok"))
			_ = c.Close()
		}
	}()
	dial := func(f tlsfiles.Files) error {
		cfg, err := f.Config()
		if err != nil {
			return err
		}
		c, err := tls.Dial("tcp", ln.Addr().String(), cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		// TLS 1.3 reports a refused client certificate on the first read.
		buf := make([]byte, 2)
		_, err = c.Read(buf)
		return err
	}
	good := tlsfiles.Files{CAFile: ca.File, CertFile: cli.CertFile, KeyFile: cli.KeyFile}
	if err := dial(good); err != nil {
		t.Fatalf("with CA and client certificate: %v", err)
	}
	if err := dial(tlsfiles.Files{CAFile: ca.File}); err == nil {
		t.Fatal("without a client certificate: connected")
	}
	other := testcerts.NewCA(t, "herald-test")
	if err := dial(tlsfiles.Files{CAFile: other.File, CertFile: cli.CertFile, KeyFile: cli.KeyFile}); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Fatalf("with another CA: %v, want an unknown authority error", err)
	}
	wrongName := good
	wrongName.ServerName = "db.example"
	if err := dial(wrongName); err == nil || !strings.Contains(err.Error(), "db.example") {
		t.Fatalf("with server name db.example: %v, want a name mismatch", err)
	}
	// The same material inline, as PEM text.
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if err := dial(tlsfiles.Files{CAPEM: read(ca.File), CertPEM: read(cli.CertFile), KeyPEM: read(cli.KeyFile)}); err != nil {
		t.Fatalf("with CA and client certificate inline: %v", err)
	}
	insecure := tlsfiles.Files{CertFile: cli.CertFile, KeyFile: cli.KeyFile, InsecureSkipVerify: true}
	if err := dial(insecure); err != nil {
		t.Fatalf("insecure_skip_verify: %v", err)
	}
}

func TestErrors(t *testing.T) {
	ca := testcerts.NewCA(t, "herald-test")
	cli := ca.Client("client")
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    tlsfiles.Files
		want string
	}{
		{tlsfiles.Files{CertFile: cli.CertFile}, "KeyFile: required"},
		{tlsfiles.Files{KeyFile: cli.KeyFile}, "CertFile: required"},
		{tlsfiles.Files{CAFile: "/nonexistent/ca.pem"}, "ca_file: open /nonexistent/ca.pem"},
		{tlsfiles.Files{CAFile: notPEM}, "no PEM certificate"},
		{tlsfiles.Files{CertFile: cli.CertFile, KeyFile: ca.File}, "key_file"},
		{tlsfiles.Files{CAFile: ca.File, CAPEM: "x"}, "CAPEM: set with CAFile"},
		{tlsfiles.Files{CertPEM: "x"}, "KeyFile: required"},
		{tlsfiles.Files{CAPEM: "hello"}, "CAPEM: no PEM certificate"},
		{tlsfiles.Files{CertPEM: "hello", KeyPEM: "hello"}, "KeyPEM: with CertPEM"},
		{tlsfiles.Files{CertFile: cli.CertFile, KeyPEM: "hello"}, "key_pem"},
	} {
		if _, err := tc.f.Config(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.f, err, tc.want)
		}
	}
}
