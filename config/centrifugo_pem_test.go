package config

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/test/testcerts"
)

func readPEM(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCentrifugoInlinePEM: the PEM values of Centrifugo's TLS objects are
// taken as Centrifugo v6.9.1 takes them (internal/configtypes/pem.go):
// PEM text and base64-encoded PEM become Herald's inline keys, file paths
// its file keys, and anything else is refused with Centrifugo's message.
func TestCentrifugoInlinePEM(t *testing.T) {
	ca := testcerts.NewCA(t, "cf-ca")
	pair := ca.Server("cf-server")
	certPEM, keyPEM, caPEM := readPEM(t, pair.CertFile), readPEM(t, pair.KeyFile), readPEM(t, ca.File)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

	// The listener, PEM text in the file.
	cfg, err := ParseCentrifugo([]byte(`{"http_server": {"tls": {"enabled": true, "cert_pem": `+jsonString(t, certPEM)+`, "key_pem": `+jsonString(t, keyPEM)+`, "client_ca_pem": `+jsonString(t, caPEM)+`}}}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.TLS; c.CertPEM != certPEM || c.KeyPEM != keyPEM || c.ClientCAPEM != caPEM || c.ClientAuth != "require" || c.CertFile != "" {
		t.Errorf("raw PEM: %+v", c)
	}
	if err := cfg.TLS.Validate(); err != nil {
		t.Errorf("raw PEM does not load: %v", err)
	}

	// Base64-encoded PEM in the variables, as Kubernetes secrets pass it.
	cfg, err = ParseCentrifugo([]byte(`{}`), "c.json", []string{"CENTRIFUGO_HTTP_SERVER_TLS_ENABLED=true",
		"CENTRIFUGO_HTTP_SERVER_TLS_CERT_PEM=" + b64(certPEM), "CENTRIFUGO_HTTP_SERVER_TLS_KEY_PEM=" + b64(keyPEM)})
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.TLS; c.CertPEM != certPEM || c.KeyPEM != keyPEM {
		t.Errorf("base64 PEM from the environment: %+v", c)
	}

	// Outgoing connections: a server CA as PEM text (Redis) and as base64
	// (a proxy's http.tls), a path still as a path (gRPC proxy).
	cfg, err = ParseCentrifugo([]byte(`{"engine": {"type": "redis", "redis": {"tls": {"enabled": true, "server_ca_pem": `+jsonString(t, caPEM)+`}}},
		"proxies": [{"name": "p", "endpoint": "https://backend:8443/rpc", "http": {"tls": {"enabled": true, "server_ca_pem": "`+b64(caPEM)+`"}}},
		{"name": "g", "endpoint": "grpc://backend:10001", "grpc": {"tls": {"enabled": true, "server_ca_pem": "/etc/ca.pem"}}}]}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Engine.Redis.TLS; r.CAPEM != caPEM || r.CAFile != "" {
		t.Errorf("engine.redis.tls: %+v", r)
	}
	if tc, err := cfg.Engine.Redis.TLS.Config(); err != nil || tc.RootCAs == nil {
		t.Errorf("engine.redis.tls from inline PEM: %v", err)
	}
	got := map[string]*ProxyEndpointConfig{}
	for i := range cfg.Proxies {
		got[cfg.Proxies[i].Name] = &cfg.Proxies[i]
	}
	if f := got["p"].TLSFiles; f.CAPEM != caPEM {
		t.Errorf("proxies[p].tls: %+v", f)
	}
	if f := got["g"].GRPC.TLS; f.CAFile != "/etc/ca.pem" || f.CAPEM != "" {
		t.Errorf("proxies[g].grpc.tls: %+v", f)
	}

	// Neither PEM, nor base64 PEM, nor a path.
	for _, bad := range []string{"-----BEGIN CERTIFICATE-----\nMIIB", "not\na path", b64("-----BEGIN CERTIFICATE-----\n")} {
		_, ps := mapCentrifugo(map[string]any{"http_server": map[string]any{"tls": map[string]any{"enabled": true, "cert_pem": bad, "key_pem": "/k.pem"}}})
		if !hasProblem(ps, "http_server.tls.cert_pem", "invalid PEM data: not a valid file path, base64-encoded PEM content, or raw PEM content") {
			t.Errorf("%q: %v", bad, ps)
		}
	}
}

// TestInlinePEMWithFile: a file and inline PEM for the same item is a
// problem naming both keys, for the listener and for a connection.
func TestInlinePEMWithFile(t *testing.T) {
	ca := testcerts.NewCA(t, "herald-test")
	pair := ca.Server("server")
	certPEM, keyPEM := readPEM(t, pair.CertFile), readPEM(t, pair.KeyFile)
	indent := func(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n    ") }
	cfg, err := Parse([]byte("tls:\n  cert_file: " + pair.CertFile + "\n  key_file: " + pair.KeyFile + "\n  cert_pem: |\n    " + indent(certPEM) + "\n" +
		"engine:\n  type: redis\n  redis:\n    tls:\n      enabled: true\n      ca_file: " + ca.File + "\n      ca_pem: |\n        " + strings.ReplaceAll(indent(readPEM(t, ca.File)), "\n    ", "\n        ") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	var ps Problems
	if err := cfg.Validate(); !errors.As(err, &ps) {
		t.Fatalf("Validate: %v, want problems", err)
	}
	if !hasProblem(ps, "tls.cert_pem", "set with cert_file") {
		t.Errorf("tls: %v", ps)
	}
	if !hasProblem(ps, "engine.redis.tls.ca_pem", "set with ca_file") {
		t.Errorf("engine.redis.tls: %v", ps)
	}
	// Inline alone is a valid listener.
	cfg, err = Parse([]byte("tls:\n  cert_pem: |\n    " + indent(certPEM) + "\n  key_pem: |\n    " + indent(keyPEM) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("inline PEM: %v", err)
	}
}
