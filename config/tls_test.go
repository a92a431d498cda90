package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/test/testcerts"
)

// TestTLSProblemsNameTheKey checks that TLS mistakes in a file are
// reported under their keys, files included, by Validate.
func TestTLSProblemsNameTheKey(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	good := ca.Server("server")
	missing := filepath.Join(t.TempDir(), "missing.pem")
	files := "tls:\n  cert_file: " + good.CertFile + "\n  key_file: " + good.KeyFile + "\n"
	for _, tc := range []struct {
		name, yaml, key, text string
	}{
		{"missing certificate", "tls:\n  cert_file: " + missing + "\n  key_file: " + good.KeyFile + "\n", "tls.cert_file", "no such file"},
		{"admin key missing", "admin:\n  address: 127.0.0.1:0\n  tls:\n    cert_file: " + good.CertFile + "\n    key_file: " + missing + "\n", "admin.tls.key_file", "no such file"},
		{"admin TLS without a listener", "admin:\n  tls:\n    cert_file: " + good.CertFile + "\n    key_file: " + good.KeyFile + "\n", "admin.tls.cert_file", "admin.address"},
		{"epoll with TLS", files + "websocket:\n  poller: epoll\n", "websocket.poller", "portable"},
		{"API client certificates without a CA", files + "http_api:\n  key: k\n  require_client_cert: true\n", "http_api.require_client_cert", "client_ca_file"},
		{"API client certificates without TLS", "http_api:\n  key: k\n  require_client_cert: true\n", "http_api.require_client_cert", "needs TLS"},
		{"files and ACME", files + "tls_autocert:\n  enabled: true\n  host_whitelist: [a.example.com]\n", "tls.cert_file", "not both"},
		{"ACME without hosts", "tls_autocert:\n  enabled: true\n", "tls_autocert.host_whitelist", "required"},
		{"bad version with ACME", "tls:\n  min_version: \"1.0\"\ntls_autocert:\n  enabled: true\n  host_whitelist: [a.example.com]\n", "tls.min_version", "1.2 or 1.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Validate()
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Validate: %v, want problems", err)
			}
			for _, p := range ps {
				if p.Key == tc.key && strings.Contains(p.Message, tc.text) {
					return
				}
			}
			t.Fatalf("Validate: %v, want %s mentioning %q", err, tc.key, tc.text)
		})
	}
	cfg, err := Parse([]byte(files + "  client_ca_file: " + ca.File + "\n  client_auth: optional\nhttp_api:\n  key: k\n  require_client_cert: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a good TLS configuration: %v", err)
	}
}
