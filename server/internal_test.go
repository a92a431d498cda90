package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/config"
)

// TestInternalListener: with internal.address the API, the metrics and the
// health checks answer on the internal listener and not on the main one,
// which keeps the client transports; http_api.external keeps the API on
// the main listener.
func TestInternalListener(t *testing.T) {
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Health.Enabled = true
	cfg.Internal.Address = "127.0.0.1:0"
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	public, internal := "http://"+s.Addr(), "http://"+s.InternalAddr()
	if s.InternalAddr() == "" || s.InternalAddr() == s.Addr() {
		t.Fatalf("internal listener at %q, main at %q: want a listener of its own", s.InternalAddr(), s.Addr())
	}

	for _, e := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/info", "{}"},
		{http.MethodPost, "/api", `{"method":"info","params":{}}`},
		{http.MethodGet, "/metrics", ""},
		{http.MethodGet, config.HealthzPath, ""},
		{http.MethodGet, config.ReadyzPath, ""},
		{http.MethodGet, "/health", ""},
	} {
		if code, body := httpStatus(t, e.method, internal+e.path, e.body); code != http.StatusOK {
			t.Errorf("internal %s %s: %d %s, want 200", e.method, e.path, code, body)
		}
		if code, _ := httpStatus(t, e.method, public+e.path, e.body); code != http.StatusNotFound {
			t.Errorf("public %s %s: %d, want 404 (moved to the internal listener)", e.method, e.path, code)
		}
	}
	if code, body := httpStatus(t, http.MethodGet, internal+"/metrics", ""); code != http.StatusOK || !strings.Contains(body, "herald_") {
		t.Errorf("internal /metrics: %d, want Herald's metrics", code)
	}
	// Clients still connect on the main listener.
	connectClient(t, s, "alice")
	if code, _ := httpStatus(t, http.MethodGet, internal+WebSocketPath, ""); code != http.StatusNotFound {
		t.Errorf("internal %s: %d, want 404 (clients use the main listener)", WebSocketPath, code)
	}
}

// TestInternalListenerAPIExternal: http_api.external keeps the API on the
// main listener while the metrics move.
func TestInternalListenerAPIExternal(t *testing.T) {
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.HTTPAPI.External = true
	cfg.Internal.Address = "127.0.0.1:0"
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if code, body := httpStatus(t, http.MethodPost, "http://"+s.Addr()+"/api/info", "{}"); code != http.StatusOK {
		t.Errorf("public /api/info with http_api.external: %d %s, want 200", code, body)
	}
	if code, _ := httpStatus(t, http.MethodPost, "http://"+s.InternalAddr()+"/api/info", "{}"); code != http.StatusNotFound {
		t.Errorf("internal /api/info with http_api.external: %d, want 404", code)
	}
	if code, _ := httpStatus(t, http.MethodGet, "http://"+s.Addr()+"/metrics", ""); code != http.StatusNotFound {
		t.Errorf("public /metrics: %d, want 404", code)
	}
}
