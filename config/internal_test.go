package config

import "testing"

// TestCentrifugoInternalListener: Centrifugo's internal port turns the
// internal listener on, on the main host unless internal_address names
// another; the main port, or none, leaves it off; and the API and admin
// 'external' flags keep them on the main listener.
func TestCentrifugoInternalListener(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{`{"http_server": {"port": 8000, "internal_port": "9000"}}`, ":9000"},
		{`{"http_server": {"address": "0.0.0.0", "port": 8000, "internal_port": "9000", "internal_address": "127.0.0.1"}}`, "127.0.0.1:9000"},
		{`{"http_server": {"address": "10.0.0.1", "internal_port": "9000"}}`, "10.0.0.1:9000"},
		{`{"http_server": {"port": 8000, "internal_port": "8000"}}`, ""},
		{`{"http_server": {"port": 8000, "internal_port": ""}}`, ""},
	} {
		cfg, err := ParseCentrifugo([]byte(c.file), "config.json", nil)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if cfg.Internal.Address != c.want {
			t.Errorf("%s: internal.address %q, want %q", c.file, cfg.Internal.Address, c.want)
		}
	}
	cfg, err := ParseCentrifugo([]byte(`{"http_server": {"internal_port": "9000", "tls_external": true}, "http_api": {"external": true}, "admin": {"external": true}}`), "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.HTTPAPI.External || !cfg.Admin.UI.External || !cfg.Internal.TLSExternal {
		t.Errorf("http_api.external %v, admin.ui.external %v, internal.tls_external %v: want all true", cfg.HTTPAPI.External, cfg.Admin.UI.External, cfg.Internal.TLSExternal)
	}
}
