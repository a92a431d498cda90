package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/servertest"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/server"
)

// TestHealthAgainstANode runs the health command against a real node, on
// both paths, and through the address a config file names.
func TestHealthAgainstANode(t *testing.T) {
	s := startNode(t, func(*config.Config) {})
	if out, _, err := run(t, "health", "--address", s.Addr()); err != nil || !strings.Contains(out, `/healthz: {"status":"ok"}`) {
		t.Errorf("health: %q %v", out, err)
	}
	if out, _, err := run(t, "health", "--ready", "--address", s.Addr()); err != nil || !strings.Contains(out, `"status":"ready"`) {
		t.Errorf("health --ready: %q %v", out, err)
	}
	file := writeFile(t, "address: "+s.Addr()+"\nclient: {insecure: true}\n")
	if out, _, err := run(t, "health", "--config", file); err != nil || !strings.Contains(out, "/healthz") {
		t.Errorf("health --config: %q %v", out, err)
	}
}

// TestHealthFails checks that every way a node can be unwell is a non-zero
// exit with a message naming it.
func TestHealthFails(t *testing.T) {
	draining := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"status":"draining"}`)
	}))
	defer draining.Close()
	// A port nothing listens on: take one and close it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"503":          {[]string{"--ready", "--address", strings.TrimPrefix(draining.URL, "http://")}, `503 {"status":"draining"}`},
		"refused":      {[]string{"--address", closed}, "connection refused"},
		"no port":      {[]string{"--address", "localhost"}, `address "localhost"`},
		"port zero":    {[]string{"--address", ":0"}, "needs a port"},
		"bad config":   {[]string{"--config", writeFile(t, "adress: x\n")}, "adress"},
		"bad duration": {[]string{"--timeout", "soon"}, "soon"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := run(t, append([]string{"health"}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestHealthURL(t *testing.T) {
	for addr, want := range map[string]string{
		":8000":          "http://127.0.0.1:8000/healthz",
		"0.0.0.0:8000":   "http://127.0.0.1:8000/healthz",
		"[::]:8000":      "http://127.0.0.1:8000/healthz",
		"10.0.0.5:9000":  "http://10.0.0.5:9000/healthz",
		"[::1]:8000":     "http://[::1]:8000/healthz",
		"localhost:8000": "http://localhost:8000/healthz",
	} {
		if got, err := healthURL(addr, "/healthz", false); err != nil || got != want {
			t.Errorf("%s: got %q %v, want %q", addr, got, err, want)
		}
	}
}

// TestHealthOverTLS: a node whose listener serves TLS is checked over
// HTTPS, chosen from its configuration file (as the image's health check
// and an exec probe run it) or with --tls; plain HTTP to it fails.
func TestHealthOverTLS(t *testing.T) {
	pair := testcerts.NewCA(t, "health").Server("node")
	s := startNode(t, func(cfg *config.Config) {
		cfg.TLS.CertFile, cfg.TLS.KeyFile = pair.CertFile, pair.KeyFile
	})
	file := writeFile(t, "address: "+s.Addr()+"\nclient: {insecure: true}\ntls:\n  cert_file: "+pair.CertFile+"\n  key_file: "+pair.KeyFile+"\n")
	if out, _, err := run(t, "health", "--config", file); err != nil || !strings.Contains(out, "https://") {
		t.Errorf("health --config with tls: %q %v", out, err)
	}
	if out, _, err := run(t, "health", "--tls", "--address", s.Addr()); err != nil || !strings.Contains(out, `{"status":"ok"}`) {
		t.Errorf("health --tls: %q %v", out, err)
	}
	if _, _, err := run(t, "health", "--address", s.Addr()); err == nil {
		t.Error("plain HTTP to a TLS listener passed")
	}
}

// startNode starts a node on a loopback port, its configuration changed by
// set, and shuts it down when t ends.
func startNode(t *testing.T, set func(*config.Config)) *server.Server {
	t.Helper()
	cfg := config.Default()
	cfg.Address = "127.0.0.1:0"
	cfg.Client.Insecure = true
	cfg.Shutdown.DrainWindow = 10 * time.Millisecond
	set(&cfg)
	return servertest.Start(t, cfg)
}
