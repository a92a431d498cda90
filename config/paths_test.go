package config

import (
	"fmt"
	"strings"
	"testing"
)

// TestPathsDefaults: every endpoint's default is Centrifugo v6's, and a
// trailing slash is dropped.
func TestPathsDefaults(t *testing.T) {
	p := Default().Paths()
	for got, want := range map[string]string{
		p.WebSocket: "/connection/websocket", p.UniWebSocket: "/connection/uni_websocket",
		p.HTTPStream: "/connection/http_stream", p.SSE: "/connection/sse", p.Emulation: "/emulation",
		p.UniHTTPStream: "/connection/uni_http_stream", p.UniSSE: "/connection/uni_sse",
		p.Metrics: "/metrics", p.Health: "/health", p.API: "/api", p.AdminUI: "/admin",
	} {
		if got != want {
			t.Errorf("default path %q, want %q", got, want)
		}
	}
	c := Default()
	c.WebSocket.HandlerPrefix = "/ws/"
	if got := c.Paths().WebSocket; got != "/ws" {
		t.Errorf("/ws/ resolves to %q", got)
	}
}

// problemsOf validates c and returns its problems as "key: message" lines.
func problemsOf(t *testing.T, c Config) []string {
	t.Helper()
	var out []string
	c.pathProblems(func(key, format string, args ...any) {
		out = append(out, key+": "+fmt.Sprintf(format, args...))
	})
	return out
}

// TestPathProblems: malformed paths are refused naming their key; two
// endpoints of one listener on one path, or one below another's subtree,
// are refused naming both keys; endpoints that are off or on another
// listener do not collide.
func TestPathProblems(t *testing.T) {
	cases := []struct {
		name string
		set  func(c *Config)
		want []string // substrings of the one problem; nil: none
	}{
		{"defaults", func(c *Config) {}, nil},
		{"all moved", func(c *Config) {
			c.WebSocket.HandlerPrefix, c.SSE.HandlerPrefix, c.HTTPStream.HandlerPrefix = "/ws", "/ws/sse", "/ws/stream"
			c.Emulation.HandlerPrefix, c.Prometheus.HandlerPrefix, c.HTTPAPI.HandlerPrefix = "/ws/emu", "/prom", "/capi"
			c.Health.Enabled, c.Health.HandlerPrefix = true, "/hc"
		}, nil},
		{"relative", func(c *Config) { c.WebSocket.HandlerPrefix = "ws" }, []string{"websocket.handler_prefix", "starting with /"}},
		{"root", func(c *Config) { c.SSE.HandlerPrefix = "/" }, []string{"sse.handler_prefix", "not the root"}},
		{"query", func(c *Config) { c.Emulation.HandlerPrefix = "/emu?x" }, []string{"emulation.handler_prefix", "plain path"}},
		{"unclean", func(c *Config) { c.Prometheus.HandlerPrefix = "/a//metrics" }, []string{"prometheus.handler_prefix", "clean path"}},
		{"same path", func(c *Config) { c.SSE.HandlerPrefix = "/connection/http_stream" },
			[]string{"sse.handler_prefix", "http_stream.handler_prefix", "main listener"}},
		{"same as a probe", func(c *Config) { c.Health.Enabled, c.Health.HandlerPrefix = true, "/healthz" },
			[]string{"health.handler_prefix", "Herald's /healthz"}},
		{"metrics under the API", func(c *Config) { c.Prometheus.HandlerPrefix = "/api/metrics" },
			[]string{"http_api.handler_prefix", "prometheus.handler_prefix", "/api/metrics"}},
		{"API over websocket", func(c *Config) { c.HTTPAPI.HandlerPrefix = "/connection" },
			[]string{"http_api.handler_prefix", "websocket.handler_prefix", "every path under it"}},
		{"admin UI over the API", func(c *Config) {
			c.Admin.UI.Enabled, c.Admin.UI.Insecure, c.Admin.UI.Path = true, true, "/x"
			c.HTTPAPI.HandlerPrefix = "/x/api"
		}, []string{"http_api.handler_prefix", "admin.ui.path"}},
		{"off endpoints do not collide", func(c *Config) {
			c.UniSSE.HandlerPrefix = "/connection/sse"
			c.Health.HandlerPrefix = "/metrics"
			c.HTTPAPI.Disabled, c.UniWebSocket.HandlerPrefix = true, "/api"
		}, nil},
		{"admin listener", func(c *Config) {
			c.Admin.Address = "127.0.0.1:0"
			c.Admin.UI.Enabled, c.Admin.UI.Insecure, c.Admin.UI.Path = true, true, "/api" // not on the main listener
			c.Prometheus.HandlerPrefix = "/debug/pprof/metrics"
		}, []string{"prometheus.handler_prefix", "pprof", "admin listener"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.set(&c)
			ps := problemsOf(t, c)
			if tc.want == nil {
				if len(ps) > 0 {
					t.Fatalf("problems %q, want none", ps)
				}
				return
			}
			if len(ps) != 1 {
				t.Fatalf("problems %q, want one naming %q", ps, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(ps[0], w) {
					t.Errorf("problem %q does not say %q", ps[0], w)
				}
			}
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want[0]) {
				t.Errorf("Validate: %v, want the problem", err)
			}
		})
	}
}

// TestCentrifugoPaths: a Centrifugo file's handler_prefix keys are taken
// by name (also from CENTRIFUGO_ variables), and a collision in it is
// refused naming both of its keys.
func TestCentrifugoPaths(t *testing.T) {
	file := []byte(`{
  "websocket": {"handler_prefix": "/rt/ws"},
  "http_stream": {"enabled": true, "handler_prefix": "/rt/stream"},
  "uni_sse": {"enabled": true, "handler_prefix": "/rt/uni_sse"},
  "emulation": {"handler_prefix": "/rt/emulation"},
  "http_api": {"handler_prefix": "/rt/api"},
  "admin": {"enabled": true, "insecure": true, "handler_prefix": "/rt/admin"},
  "prometheus": {"enabled": true, "handler_prefix": "/rt/metrics"},
  "health": {"enabled": true}
}`)
	cfg, err := ParseCentrifugo(file, "config.json", []string{"CENTRIFUGO_SSE_ENABLED=true", "CENTRIFUGO_SSE_HANDLER_PREFIX=/rt/sse"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p := cfg.Paths()
	for got, want := range map[string]string{
		p.WebSocket: "/rt/ws", p.HTTPStream: "/rt/stream", p.SSE: "/rt/sse", p.UniSSE: "/rt/uni_sse",
		p.Emulation: "/rt/emulation", p.API: "/rt/api", p.AdminUI: "/rt/admin", p.Metrics: "/rt/metrics", p.Health: "/health",
	} {
		if got != want {
			t.Errorf("path %q, want %q", got, want)
		}
	}
	if !cfg.Health.Enabled {
		t.Error("health.enabled not taken")
	}

	bad := []byte(`{"websocket": {"handler_prefix": "/rt"}, "sse": {"enabled": true, "handler_prefix": "/rt"}}`)
	cfg, err = ParseCentrifugo(bad, "config.json", nil)
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "sse.handler_prefix") || !strings.Contains(err.Error(), "websocket.handler_prefix") {
		t.Fatalf("two endpoints at /rt: %v, want both keys named", err)
	}
}
