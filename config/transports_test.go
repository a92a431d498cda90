package config

import (
	"strings"
	"testing"
)

func TestHTTPTransportsConfig(t *testing.T) {
	cfg, err := Parse([]byte("http_stream:\n  enabled: false\n  max_request_body_size: -1\nuni_sse:\n  enabled: true\nemulation:\n  max_request_body_size: 1024\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTPStream.Enabled || !cfg.SSE.Enabled || !cfg.UniSSE.Enabled || cfg.UniHTTPStream.Enabled || cfg.Emulation.MaxRequestBodySize != 1024 {
		t.Fatalf("parsed %+v", cfg.TransportsConfig)
	}
	err = cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "http_stream.max_request_body_size: -1: must not be negative") {
		t.Fatalf("validate: %v, want the negative size named", err)
	}
	if _, err := Parse([]byte("sse:\n  enable: true\n")); err == nil || !strings.Contains(err.Error(), `did you mean "sse.enabled"`) {
		t.Fatalf("misspelt key: %v", err)
	}
	d := Default()
	if !d.HTTPStream.Enabled || !d.SSE.Enabled || d.UniHTTPStream.Enabled || d.UniSSE.Enabled {
		t.Fatalf("defaults %+v: want http_stream and sse on, uni off", d.TransportsConfig)
	}
	unknown, err := ApplyEnv(&d, []string{"HERALD_UNI_HTTP_STREAM_ENABLED=true"})
	if err != nil || len(unknown) > 0 || !d.UniHTTPStream.Enabled {
		t.Fatalf("env: %v %v %+v", unknown, err, d.UniHTTPStream)
	}
}

// TestEmulationLimitsConfig: the emulation rate limits reach the hub, and
// a negative burst is named.
func TestEmulationLimitsConfig(t *testing.T) {
	cfg, err := Parse([]byte("emulation:\n  per_address_rate: 5\n  per_address_burst: 7\n  per_session_rate: -1\n  per_session_burst: -2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l := cfg.Hub("test").Emulation; l.PerAddress != 5 || l.PerAddressBurst != 7 || l.PerSession != -1 {
		t.Fatalf("hub limits %+v", l)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "emulation.per_session_burst: -2: must not be negative") {
		t.Fatalf("validate: %v, want the negative burst named", err)
	}
}
