package config

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/hub"
)

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

// TestCentrifugoCodeTransforms: Centrifugo's code transforms are read
// with their names and shapes.
func TestCentrifugoCodeTransforms(t *testing.T) {
	cfg, err := ParseCentrifugo([]byte(`{
		"client": {"connect_code_to_unidirectional_disconnect": {"enabled": true, "transforms": [{"code": 103, "to": {"code": 4503, "reason": "denied"}}]}},
		"uni_sse": {"enabled": true, "connect_code_to_http_response": {"enabled": true, "transforms": [{"code": 3500, "to": {"status_code": 401}}]}},
		"uni_http_stream": {"connect_code_to_http_response": {"enabled": false, "transforms": []}}
	}`), "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if u := cfg.Client.ConnectCodeToUnidirectionalDisconnect; !u.Enabled || len(u.Transforms) != 1 || u.Transforms[0].Code != 103 || u.Transforms[0].To.Code != 4503 || u.Transforms[0].To.Reason != "denied" {
		t.Errorf("client.connect_code_to_unidirectional_disconnect: %+v", u)
	}
	if c := cfg.UniSSE.ConnectCodeToHTTPResponse; !c.Enabled || len(c.Transforms) != 1 || c.Transforms[0].Code != 3500 || c.Transforms[0].To.StatusCode != 401 {
		t.Errorf("uni_sse.connect_code_to_http_response: %+v", c)
	}
	bad, err := ParseCentrifugo([]byte(`{"uni_sse": {"connect_code_to_http_response": {"enabled": true, "transforms": [{"code": 3500, "to": {}}]}}}`), "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "uni_sse.connect_code_to_http_response.transforms") {
		t.Errorf("a transform without a status: %v, want refused naming its key", err)
	}
}

// TestCentrifugoChannelSyntax: Centrifugo's channel syntax keys are read
// as they are and reach the hub and the proxy.
func TestCentrifugoChannelSyntax(t *testing.T) {
	cfg, err := ParseCentrifugo([]byte(`{"channel": {"private_prefix": "private-", "namespace_boundary": "/", "user_boundary": "@", "user_separator": ";"}}`), "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := hub.ChannelSyntax{PrivatePrefix: "private-", NamespaceBoundary: "/", UserBoundary: "@", UserSeparator: ";"}
	if got := cfg.Hub("").Channels.ChannelSyntax; got != want {
		t.Errorf("hub syntax %+v, want %+v", got, want)
	}
	if p, _ := cfg.ProxyOptions(); p.ChannelSyntax != want {
		t.Errorf("proxy syntax %+v, want %+v", p.ChannelSyntax, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}

// TestCentrifugoProxyStatusTransforms: a proxy's
// http.status_to_code_transforms reach the proxy endpoint.
func TestCentrifugoProxyStatusTransforms(t *testing.T) {
	cfg, err := ParseCentrifugo([]byte(`{"proxies": [{"name": "p", "endpoint": "http://backend/p", "http": {"status_to_code_transforms": [{"status_code": 403, "to_error": {"code": 103, "message": "denied"}}]}}]}`), "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Proxies) != 1 || len(cfg.Proxies[0].StatusToCodeTransforms) != 1 || cfg.Proxies[0].StatusToCodeTransforms[0].ToError.Code != 103 {
		t.Errorf("proxies: %+v", cfg.Proxies)
	}
}
