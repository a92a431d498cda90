package config

import (
	"strings"
	"testing"
)

// TestH2CExternalImport: Centrifugo's http_server.h2c_external becomes
// http.h2c_external, and is refused as Centrifugo refuses it: without a
// separate internal port, or with TLS on the main listener.
func TestH2CExternalImport(t *testing.T) {
	cfg, err := ParseCentrifugo([]byte(`{"http_server": {"h2c_external": true, "internal_port": "9001"}, "debug": {"enabled": true}}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.HTTP.H2CExternal || !cfg.Debug.Enabled || cfg.Debug.HandlerPrefix != "/debug/pprof" {
		t.Errorf("h2c_external %v, debug %+v", cfg.HTTP.H2CExternal, cfg.Debug)
	}
	for _, c := range []struct{ file, want string }{
		{`{"http_server": {"h2c_external": true}}`, "http.h2c_external: needs internal.address"},
		{`{"http_server": {"h2c_external": true, "internal_port": "9001", "tls": {"enabled": true, "cert_pem": "c.pem", "key_pem": "k.pem"}}}`, "http.h2c_external: not with TLS"},
		{`{"debug": {"enabled": true, "handler_prefix": "pprof"}}`, "debug.handler_prefix: a path"},
	} {
		cfg, err := ParseCentrifugo([]byte(c.file), "c.json", nil)
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.file, err, c.want)
		}
	}
}
