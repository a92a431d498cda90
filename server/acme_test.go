package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// pebbleModule is the ACME test server the test builds, Let's Encrypt's
// Pebble; HERALD_TEST_PEBBLE names a binary built already instead. From
// v2.9.0 Pebble leaves out the Location header of the finalize response,
// which RFC 8555 does not require but Let's Encrypt sends and
// golang.org/x/crypto/acme (autocert) needs to poll the order; v2.8.0
// behaves as Let's Encrypt does.
const pebbleModule = "github.com/letsencrypt/pebble/v2/cmd/pebble@v2.8.0"

// acmeHost is the name Herald gets a certificate for; the test's DNS
// server answers it with loopback.
const acmeHost = "herald.test"

// TestACMEIssuesAndServes runs Pebble on loopback, lets Herald obtain a
// certificate for acmeHost over ACME with the HTTP-01 challenge (Pebble
// fetches the challenge from Herald's challenge listener), and checks that
// Herald serves the issued certificate and keeps it in its cache
// directory.
func TestACMEIssuesAndServes(t *testing.T) {
	pebble := pebbleBinary(t)
	dns := loopbackDNS(t)
	pebbleCA := testcerts.NewCA(t, "pebble-https")
	pebbleCert := pebbleCA.Server("pebble")
	listen, mgmt := freePort(t), freePort(t)

	cache := filepath.Join(t.TempDir(), "certs")
	s := tlsNode(t, testcerts.Pair{}, func(c *config.Config) {
		c.TLS.CertFile, c.TLS.KeyFile = "", ""
		c.TLSAutocert.Enabled = true
		c.TLSAutocert.HostWhitelist = []string{acmeHost}
		c.TLSAutocert.CacheDir = cache
		c.TLSAutocert.DirectoryURL = "https://" + listen + "/dir"
		c.TLSAutocert.DirectoryCAFile = pebbleCA.File
		c.TLSAutocert.HTTPAddress = "127.0.0.1:0"
	})
	_, httpPort, _ := net.SplitHostPort(s.ACMEChallengeAddr())

	conf := map[string]any{"pebble": map[string]any{
		"listenAddress": listen, "managementListenAddress": mgmt,
		"certificate": pebbleCert.CertFile, "privateKey": pebbleCert.KeyFile,
		"httpPort": mustAtoi(t, httpPort), "tlsPort": mustAtoi(t, portOf(freePort(t))),
		"externalAccountBindingRequired": false,
	}}
	confFile := filepath.Join(t.TempDir(), "pebble.json")
	data, _ := json.Marshal(conf)
	if err := os.WriteFile(confFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pebble, "-config", confFile, "-dnsserver", dns)
	// No random validation delay and no nonces refused on purpose.
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0")
	var out testenv.LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("pebble output:\n%s", out.String())
		}
	})
	mgmtClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pebbleCA.Pool}}}
	t.Cleanup(mgmtClient.CloseIdleConnections)
	var rootPEM []byte
	testenv.Eventually(t, "pebble's management interface", 20*time.Second, func() bool {
		r, err := mgmtClient.Get("https://" + mgmt + "/roots/0")
		if err != nil {
			return false
		}
		defer r.Body.Close()
		rootPEM, err = io.ReadAll(r.Body)
		return err == nil && r.StatusCode == http.StatusOK
	})
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(rootPEM) {
		t.Fatalf("pebble's root: %q", rootPEM)
	}

	// The first handshake for acmeHost waits for the certificate.
	client := &http.Client{Timeout: 90 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots, ServerName: acmeHost},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, s.Addr())
		},
	}}
	t.Cleanup(client.Transport.(*http.Transport).CloseIdleConnections)
	r, err := client.Get("https://" + acmeHost + "/healthz")
	if err != nil {
		t.Fatalf("HTTPS to Herald with a certificate over ACME: %v", err)
	}
	r.Body.Close()
	leaf := r.TLS.PeerCertificates[0]
	if r.StatusCode != http.StatusOK || r.ProtoMajor != 2 || len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != acmeHost {
		t.Fatalf("status %d over %s, certificate for %v: want 200 over HTTP/2 with a certificate for %s", r.StatusCode, r.Proto, leaf.DNSNames, acmeHost)
	}
	entries, err := os.ReadDir(cache)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if err != nil || !strings.Contains(strings.Join(names, " "), acmeHost) {
		t.Fatalf("cache directory holds %v (%v), want the certificate of %s", names, err, acmeHost)
	}
	// A node started on the same cache directory serves the certificate
	// from it, with no ACME server to ask.
	restarted := tlsNode(t, testcerts.Pair{}, func(c *config.Config) {
		c.TLS.CertFile, c.TLS.KeyFile = "", ""
		c.TLSAutocert = config.Default().TLSAutocert
		c.TLSAutocert.Enabled = true
		c.TLSAutocert.HostWhitelist = []string{acmeHost}
		c.TLSAutocert.CacheDir = cache
		c.TLSAutocert.DirectoryURL = "https://" + freePort(t) + "/dir"
		c.TLSAutocert.HTTPAddress = "127.0.0.1:0"
	})
	cached, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", restarted.Addr(), &tls.Config{RootCAs: roots, ServerName: acmeHost})
	if err != nil {
		t.Fatalf("a node on the same cache directory: %v", err)
	}
	cached.Close()
	if got := cached.ConnectionState().PeerCertificates[0].SerialNumber; got.Cmp(leaf.SerialNumber) != 0 {
		t.Fatalf("a node on the same cache directory serves serial %s, want the cached %s", got, leaf.SerialNumber)
	}
	// Another name gets no certificate requested.
	other := &tls.Config{RootCAs: roots, ServerName: "other.test"}
	if c, err := tls.Dial("tcp", s.Addr(), other); err == nil {
		c.Close()
		t.Fatal("a handshake for a host outside host_whitelist succeeded")
	}
	// The challenge listener redirects everything else to https.
	noRedirect := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err = noRedirect.Get("http://" + s.ACMEChallengeAddr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode/100 != 3 || !strings.HasPrefix(r.Header.Get("Location"), "https://") {
		t.Fatalf("plain HTTP on the challenge listener: %d %q, want a redirect to https", r.StatusCode, r.Header.Get("Location"))
	}
}

// pebbleBinary builds Pebble, or returns HERALD_TEST_PEBBLE.
func pebbleBinary(t *testing.T) string {
	if p := os.Getenv("HERALD_TEST_PEBBLE"); p != "" {
		return p
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", pebbleModule)
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := fmt.Sprintf("building the ACME test server (go install %s): %v\n%s", pebbleModule, err, out)
		if os.Getenv(testenv.RequireServices) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return filepath.Join(dir, "pebble")
}

// loopbackDNS answers every A question with 127.0.0.1 and every other
// question with no records, over UDP and TCP on one loopback port (Pebble
// asks over UDP up to v2.8 and over TCP since), so that Pebble finds
// Herald's challenge listener for acmeHost.
func loopbackDNS(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", ln.Addr().String())
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Add(2)
	go func() {
		defer wg.Done()
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply, err := dnsAnswer(buf[:n]); err == nil {
				_, _ = pc.WriteTo(reply, from)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				// Messages over TCP are preceded by their length (RFC 1035 4.2.2).
				var size [2]byte
				for {
					if _, err := io.ReadFull(c, size[:]); err != nil {
						return
					}
					query := make([]byte, int(size[0])<<8|int(size[1]))
					if _, err := io.ReadFull(c, query); err != nil {
						return
					}
					reply, err := dnsAnswer(query)
					if err != nil {
						return
					}
					if _, err := c.Write(append([]byte{byte(len(reply) >> 8), byte(len(reply))}, reply...)); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		pc.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

func dnsAnswer(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if q.Type == dnsmessage.TypeA {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 60}
		if err := b.AResource(rh, dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// freePort is a loopback address that was free a moment ago, for a
// program that takes its address in a configuration file.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
