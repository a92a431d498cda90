package config

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/test/testcerts"
)

// TestClientTLSProblems checks the tls sections of the engines and the
// proxies by key: keys that would do nothing, a certificate without its
// key, TLS on an http:// endpoint.
func TestClientTLSProblems(t *testing.T) {
	cfg, err := Parse([]byte(`
engine:
  type: redis
  redis:
    tls:
      ca_file: /etc/herald/redis-ca.pem
  nats:
    tls:
      enabled: true
      cert_file: /etc/herald/nats.crt
proxies:
  - name: plain
    endpoint: http://backend/connect
    tls:
      server_name: backend.internal
  - name: secure
    endpoint: https://backend/connect
    tls:
      key_file: /etc/herald/proxy.key
client:
  proxy:
    connect: plain
    refresh: secure
`))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	if err == nil {
		t.Fatal("want problems")
	}
	for _, want := range []string{
		"engine.redis.tls.enabled: must be true for the other engine.redis.tls keys to apply",
		"engine.nats.tls.key_file: required with cert_file",
		"proxies[0].tls: the endpoint is http://, so it has no TLS",
		"proxies[1].tls.cert_file: required with key_file",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problems:\n%v\nwant one containing %s", err, want)
		}
	}
}

// TestClientTLSFiles reads a valid section's files into a TLS
// configuration, and names the key of one that cannot be read.
func TestClientTLSFiles(t *testing.T) {
	ca := testcerts.NewCA(t, "herald-test")
	client := ca.Client("herald")
	cfg, err := Parse([]byte(`
engine:
  type: redis
  redis:
    tls:
      enabled: true
      ca_file: ` + ca.File + `
      cert_file: ` + client.CertFile + `
      key_file: ` + client.KeyFile + `
      server_name: redis.internal
proxies:
  - name: secure
    endpoint: https://backend/connect
    tls:
      ca_file: /nonexistent/ca.pem
  - name: default
    endpoint: https://backend/connect
  - name: grpc-tls
    endpoint: grpc://backend:10001
    grpc:
      tls:
        enabled: true
        ca_file: ` + ca.File + `
        server_name: backend.internal
  - name: grpc-plain
    endpoint: grpc://backend:10001
    grpc:
      tls:
        enabled: true
        ca_file: /nonexistent/grpc-ca.pem
client:
  proxy:
    connect: secure
    refresh: default
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	tc, err := cfg.Engine.Redis.TLS.Config()
	if err != nil || tc == nil || tc.ServerName != "redis.internal" || tc.RootCAs == nil || len(tc.Certificates) != 1 {
		t.Fatalf("engine.redis.tls: %+v, %v", tc, err)
	}
	if tc, err := cfg.Engine.NATS.TLS.Config(); tc != nil || err != nil {
		t.Fatalf("engine.nats.tls (not enabled): %+v, %v, want nil", tc, err)
	}
	if _, err := cfg.ProxyTLS(0); err == nil || !strings.Contains(err.Error(), "proxies[0].tls: ca_file: open /nonexistent/ca.pem") {
		t.Fatalf("proxies[0].tls: %v, want the unreadable ca_file named", err)
	}
	if tc, err := cfg.ProxyTLS(1); tc != nil || err != nil {
		t.Fatalf("proxies[1] without tls: %+v, %v, want nil", tc, err)
	}
	if tc, err := cfg.ProxyTLS(2); err != nil || tc == nil || tc.ServerName != "backend.internal" || tc.RootCAs == nil {
		t.Fatalf("proxies[2].grpc.tls: %+v, %v", tc, err)
	}
	if _, err := cfg.ProxyTLS(3); err == nil || !strings.Contains(err.Error(), "proxies[3].grpc.tls: ca_file: open /nonexistent/grpc-ca.pem") {
		t.Fatalf("proxies[3].grpc.tls: %v, want the unreadable ca_file named", err)
	}
}

// TestClientTLSWarnings: a section that accepts any certificate is valid
// but warned about, by key.
func TestClientTLSWarnings(t *testing.T) {
	cfg, err := Parse([]byte(`
client:
  token:
    hmac_secret_key: a-long-enough-secret-for-the-test-0123456789
http_api:
  key: another-long-enough-key-0123456789
engine:
  nats:
    tls:
      enabled: true
      insecure_skip_verify: true
proxies:
  - name: app
    endpoint: https://backend/connect
    tls:
      insecure_skip_verify: true
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	w := strings.Join(cfg.Warnings(), "\n")
	for _, want := range []string{"engine.nats.tls.insecure_skip_verify is on", "proxies[0].tls.insecure_skip_verify is on"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings:\n%s\nwant one containing %s", w, want)
		}
	}
}
