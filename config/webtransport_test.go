package config

import (
	"strings"
	"testing"
)

// TestCentrifugoHTTP3AndWebTransport: Centrifugo's http_server.http3 and
// webtransport keys, from a file and from the environment, turn on
// Herald's, with handler_prefix and message_size_limit as they are.
func TestCentrifugoHTTP3AndWebTransport(t *testing.T) {
	file := `{"http_server": {"http3": {"enabled": true}},
	  "webtransport": {"enabled": true, "handler_prefix": "/wt", "message_size_limit": 1000}}`
	cfg, err := ParseCentrifugo([]byte(file), "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.WebTransport
	if !cfg.HTTP.HTTP3.Enabled || !w.Enabled || w.HandlerPrefix != "/wt" || w.MessageSizeLimit != 1000 || cfg.Paths().WebTransport != "/wt" {
		t.Errorf("from the file: http3 %v, webtransport %+v", cfg.HTTP.HTTP3, w)
	}
	cfg, err = ParseCentrifugo([]byte("{}"), "config.json", []string{"CENTRIFUGO_HTTP_SERVER_HTTP3_ENABLED=true", "CENTRIFUGO_WEBTRANSPORT_ENABLED=true"})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.HTTP.HTTP3.Enabled || !cfg.WebTransport.Enabled || cfg.Paths().WebTransport != "/connection/webtransport" {
		t.Errorf("from the environment: http3 %v, webtransport %+v", cfg.HTTP.HTTP3, cfg.WebTransport)
	}
	// Without TLS the pair is refused by name, as Centrifugo refuses to
	// start with it.
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "http.http3.enabled") {
		t.Errorf("http3 without TLS: %v", err)
	}
	cfg.HTTP.HTTP3.Enabled = false
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "webtransport.enabled: WebTransport runs over HTTP/3") {
		t.Errorf("webtransport without http3: %v", err)
	}
	cfg.WebTransport.MessageSizeLimit = -1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "webtransport.message_size_limit") {
		t.Errorf("a negative message_size_limit: %v", err)
	}
}
