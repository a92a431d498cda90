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
		"engine.redis.tls.enabled: must be true for the other keys of the section to apply",
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
// configuration; a section whose files are missing is valid (they are
// read when the connection is made).
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
	// The proxies' files are read by proxy.New (proxy/endpoint_internal_test.go).
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
