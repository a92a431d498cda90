package config

import (
	"slices"
	"testing"
)

// proxies[].emulated_headers is taken as it is, from every format, and
// the hub keeps the headers it names for the connection's later calls.
func TestCentrifugoEmulatedHeaders(t *testing.T) {
	files := map[string]string{
		"c.json": `{"proxies": [{"name": "auth", "endpoint": "http://127.0.0.1:3000/connect", "http_headers": ["Cookie"], "emulated_headers": ["Authorization"]}],
			"client": {"proxy": {"connect": {"enabled": true, "endpoint": "http://127.0.0.1:3000/c", "emulated_headers": ["X-Token"]}}}}`,
		"c.yaml": "proxies:\n  - name: auth\n    endpoint: http://127.0.0.1:3000/connect\n    http_headers: [Cookie]\n    emulated_headers: [Authorization]\n" +
			"client:\n  proxy:\n    connect:\n      enabled: true\n      endpoint: http://127.0.0.1:3000/c\n      emulated_headers: [X-Token]\n",
		"c.toml": "[[proxies]]\nname = \"auth\"\nendpoint = \"http://127.0.0.1:3000/connect\"\nhttp_headers = [\"Cookie\"]\nemulated_headers = [\"Authorization\"]\n" +
			"[client.proxy.connect]\nenabled = true\nendpoint = \"http://127.0.0.1:3000/c\"\nemulated_headers = [\"X-Token\"]\n",
	}
	for name, text := range files {
		cfg, err := ParseCentrifugo([]byte(text), name, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := map[string][]string{}
		for _, p := range cfg.Proxies {
			got[p.Name] = p.EmulatedHeaders
		}
		if !slices.Equal(got["auth"], []string{"Authorization"}) || !slices.Equal(got["client.proxy.connect"], []string{"X-Token"}) {
			t.Errorf("%s: emulated_headers %v", name, got)
		}
		if keep := cfg.Hub("test").KeepConnectHeaders; !slices.Equal(keep, []string{"Authorization", "X-Token"}) && !slices.Equal(keep, []string{"X-Token", "Authorization"}) {
			t.Errorf("%s: the hub keeps %v", name, keep)
		}
	}
}
