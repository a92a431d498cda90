package tlsconf

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/internal/test/testcerts"
)

// echoServer serves conf on loopback: each connection gets its lines
// echoed back.
func echoServer(t *testing.T, conf *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", conf)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// dial completes a handshake with addr, trusting ca.
func dial(t *testing.T, addr string, conf *tls.Config) (*tls.Conn, error) {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, conf)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return c, nil
}

func mustDial(t *testing.T, addr string, conf *tls.Config) *tls.Conn {
	t.Helper()
	c, err := dial(t, addr, conf)
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	return c
}

func echo(t *testing.T, c *tls.Conn, line string) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		t.Fatalf("write on an open connection: %v", err)
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || got != line+"\n" {
		t.Fatalf("echo on an open connection: %q, %v", got, err)
	}
}

func servedSerial(c *tls.Conn) string {
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// TestReloadOnChange replaces the certificate files in place: new
// connections get the new certificate within a check interval, and a
// connection opened before keeps working.
func TestReloadOnChange(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	first, second := ca.Server("first"), ca.Server("second")
	f, err := New(Config{CertFile: first.CertFile, KeyFile: first.KeyFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := echoServer(t, f.TLSConfig("http/1.1"))
	client := &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}
	old := mustDial(t, addr, client)
	if got := servedSerial(old); got != first.Serial.String() {
		t.Fatalf("served %s, want the first certificate %s", got, first.Serial)
	}
	echo(t, old, "before")

	testcerts.Replace(t, first, second)
	deadline := time.Now().Add(5 * CheckInterval)
	for {
		c := mustDial(t, addr, client)
		if servedSerial(c) == second.Serial.String() {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("still serving the first certificate %s after the files changed", CheckInterval*5)
		}
		time.Sleep(50 * time.Millisecond) // the next check is due after CheckInterval
	}
	echo(t, old, "after")
}

// TestReloadNow reloads on request (SIGHUP) without waiting for a check,
// and a failed reload keeps the certificate being served.
func TestReloadNow(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	first, second := ca.Server("first"), ca.Server("second")
	f, err := New(Config{CertFile: first.CertFile, KeyFile: first.KeyFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := echoServer(t, f.TLSConfig())
	client := &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}
	testcerts.Replace(t, first, second)
	if err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := servedSerial(mustDial(t, addr, client)); got != second.Serial.String() {
		t.Fatalf("after Reload served %s, want %s", got, second.Serial)
	}

	if err := os.WriteFile(first.CertFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = f.Reload()
	var fe *optionerr.Error
	if !errors.As(err, &fe) || fe.Field != "CertFile" {
		t.Fatalf("reload of a broken certificate: %v, want an error naming CertFile", err)
	}
	// Also past a modification time check.
	later := time.Now().Add(2 * time.Second)
	_ = os.Chtimes(first.CertFile, later, later)
	f.nextCheck.Store(0)
	if got := servedSerial(mustDial(t, addr, client)); got != second.Serial.String() {
		t.Fatalf("after a broken rotation served %s, want the previous certificate %s", got, second.Serial)
	}
}

// TestBadFilesNameTheKey checks that each broken option is reported under
// its key, before anything listens.
func TestBadFilesNameTheKey(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	good, other := ca.Server("good"), ca.Server("other")
	expired := ca.Expired("expired")
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("-----BEGIN NOTHING-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		name  string
		cfg   Config
		field string
		text  string
	}{
		{"missing cert", Config{CertFile: missing, KeyFile: good.KeyFile}, "CertFile", "no such file"},
		{"missing key", Config{CertFile: good.CertFile, KeyFile: missing}, "KeyFile", "no such file"},
		{"garbage cert", Config{CertFile: garbage, KeyFile: good.KeyFile}, "CertFile", "garbage.pem"},
		{"garbage key", Config{CertFile: good.CertFile, KeyFile: garbage}, "KeyFile", "garbage.pem"},
		{"key of another certificate", Config{CertFile: good.CertFile, KeyFile: other.KeyFile}, "KeyFile", "does not match"},
		{"expired", Config{CertFile: expired.CertFile, KeyFile: expired.KeyFile}, "CertFile", "expired"},
		{"key without cert", Config{KeyFile: good.KeyFile}, "CertFile", "required"},
		{"cert without key", Config{CertFile: good.CertFile}, "KeyFile", "required"},
		{"garbage CA", Config{CertFile: good.CertFile, KeyFile: good.KeyFile, ClientCAFile: garbage, ClientAuth: "require"}, "ClientCAFile", "no PEM certificate"},
		{"client auth without CA", Config{CertFile: good.CertFile, KeyFile: good.KeyFile, ClientAuth: "require"}, "ClientCAFile", "required"},
		{"CA without client auth", Config{CertFile: good.CertFile, KeyFile: good.KeyFile, ClientCAFile: ca.File}, "ClientAuth", "optional or require"},
		{"unknown client auth", Config{CertFile: good.CertFile, KeyFile: good.KeyFile, ClientAuth: "yes"}, "ClientAuth", "want none, optional or require"},
		{"old version", Config{CertFile: good.CertFile, KeyFile: good.KeyFile, MinVersion: "1.1"}, "MinVersion", "want 1.2 or 1.3"},
		{"insecure suite", Config{CertFile: good.CertFile, KeyFile: good.KeyFile, CipherSuites: []string{"TLS_RSA_WITH_RC4_128_SHA"}}, "CipherSuites", "insecure"},
		{"TLS 1.3 suite", Config{CertFile: good.CertFile, KeyFile: good.KeyFile, CipherSuites: []string{"TLS_AES_128_GCM_SHA256"}}, "CipherSuites", "TLS 1.3"},
		{"unknown suite", Config{CertFile: good.CertFile, KeyFile: good.KeyFile, CipherSuites: []string{"TLS_FAST"}}, "CipherSuites", "unknown"},
		{"cert file and inline", Config{CertFile: good.CertFile, CertPEM: "x", KeyFile: good.KeyFile}, "CertPEM", "set with CertFile"},
		{"key file and inline", Config{CertFile: good.CertFile, KeyPEM: "x", KeyFile: good.KeyFile}, "KeyPEM", "set with KeyFile"},
		{"CA file and inline", Config{CertFile: good.CertFile, KeyFile: good.KeyFile, ClientCAFile: ca.File, ClientCAPEM: "x", ClientAuth: "require"}, "ClientCAPEM", "set with ClientCAFile"},
		{"garbage inline cert", Config{CertPEM: "-----BEGIN NOTHING-----\n", KeyFile: good.KeyFile}, "CertPEM", "CertPEM"},
		{"inline key of another certificate", Config{CertFile: good.CertFile, KeyPEM: readFile(t, other.KeyFile)}, "KeyPEM", "does not match"},
		{"garbage inline CA", Config{CertFile: good.CertFile, KeyFile: good.KeyFile, ClientCAPEM: "hello", ClientAuth: "require"}, "ClientCAPEM", "no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.cfg.Validate()
			found := false
			for _, e := range optionerr.All(errs) {
				if e.Field == tc.field && strings.Contains(e.Message, tc.text) {
					found = true
				}
			}
			if !found {
				t.Fatalf("Validate: %v, want a problem with %s mentioning %q", errs, tc.field, tc.text)
			}
		})
	}
	if errs := (Config{CertFile: good.CertFile, KeyFile: good.KeyFile, ClientCAFile: ca.File, ClientAuth: "optional", MinVersion: "1.3"}).Validate(); errs != nil {
		t.Fatalf("a good configuration: %v", errs)
	}
}

// TestPolicy checks the minimum version and the client certificate check
// against real handshakes.
func TestPolicy(t *testing.T) {
	ca, stranger := testcerts.NewCA(t, "test"), testcerts.NewCA(t, "stranger")
	srv := ca.Server("server")
	f, err := New(Config{CertFile: srv.CertFile, KeyFile: srv.KeyFile, MinVersion: "1.3", ClientCAFile: ca.File, ClientAuth: "require"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := echoServer(t, f.TLSConfig())
	client := func(certs ...tls.Certificate) *tls.Config {
		return &tls.Config{RootCAs: ca.Pool, ServerName: "localhost", Certificates: certs}
	}
	// With TLS 1.3 the client learns of a refused certificate at its
	// first read.
	try := func(conf *tls.Config) error {
		c, err := dial(t, addr, conf)
		if err != nil {
			return err
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "x\n"); err != nil {
			return err
		}
		_, err = bufio.NewReader(c).ReadString('\n')
		return err
	}
	if err := try(client(ca.Client("alice").Cert)); err != nil {
		t.Fatalf("a client certificate of the CA: %v", err)
	}
	if err := try(client()); err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Fatalf("no client certificate: %v, want certificate required", err)
	}
	// Go's client sends only a certificate of a CA the server names:
	// force it, as another client would.
	mallory := stranger.Client("mallory").Cert
	forced := client()
	forced.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &mallory, nil }
	if err := try(forced); err == nil || !strings.Contains(err.Error(), "unknown certificate authority") {
		t.Fatalf("a certificate of another CA: %v, want unknown certificate authority", err)
	}
	old := client(ca.Client("bob").Cert)
	old.MaxVersion = tls.VersionTLS12
	if err := try(old); err == nil || !strings.Contains(err.Error(), "protocol version") {
		t.Fatalf("TLS 1.2 against min_version 1.3: %v, want a protocol version alert", err)
	}
}
