package server

import (
	"github.com/heraldhq/herald/config"

	"context"
	"net/http"
	"strings"
	"testing"
)

// The admin UI is served under admin.ui.path on the main listener, or on
// the admin listener when there is one (and then not on the main one).
func TestAdminUIMount(t *testing.T) {
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(url string) int {
		t.Helper()
		res, err := noRedirect.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	cfg := config.Default()
	cfg.Admin.UI = config.AdminUIConfig{Enabled: true, Password: "long enough password", Path: "/ops/"}
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	base := "http://" + s.Addr()
	if c := get(base + "/ops"); c != http.StatusFound {
		t.Errorf("/ops: %d, want a redirect to /ops/", c)
	}
	if c := get(base + "/ops/"); c != 200 {
		t.Errorf("/ops/: %d", c)
	}
	if c := get(base + "/ops/api/overview"); c != http.StatusUnauthorized {
		t.Errorf("/ops/api/overview without a session: %d, want 401", c)
	}

	cfg.Admin.Address = "127.0.0.1:0"
	cfg.Admin.UI.Path = ""
	s2 := startServer(t, cfg)
	t.Cleanup(func() { _ = s2.Shutdown(context.Background()) })
	if c := get("http://" + s2.AdminAddr() + "/admin/"); c != 200 {
		t.Errorf("admin listener /admin/: %d", c)
	}
	if c := get("http://" + s2.Addr() + "/admin/"); c != http.StatusNotFound {
		t.Errorf("main listener /admin/ with an admin listener: %d, want 404", c)
	}
}

func TestAdminUIConfigCheck(t *testing.T) {
	cfg := config.Default()
	cfg.Admin.UI = config.AdminUIConfig{Enabled: true}
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "admin.ui.password") {
		t.Fatalf("enabled without a way in: %v", err)
	}
	cfg.Admin.UI = config.AdminUIConfig{Enabled: true, Insecure: true, Path: "/api"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "admin.ui.path") {
		t.Fatalf("path /api: %v", err)
	}
	cfg.Admin.UI = config.AdminUIConfig{Enabled: true, TokenSecret: "0123456789abcdef0123"}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("token secret only: %v", err)
	}
}
