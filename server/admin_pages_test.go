package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldhq/herald/config"
)

// TestAdminUIPages: admin.ui.web_path serves the UI's pages from a
// directory and web_proxy_address from a development server, over
// web_path, as Centrifugo's admin.web_path and web_proxy_address; the
// admin API stays Herald's.
func TestAdminUIPages(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("from the directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	dev := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("from the dev server at " + r.URL.Path))
	}))
	t.Cleanup(dev.Close)

	for _, c := range []struct {
		name, path, proxy, want string
	}{
		{"web_path", dir, "", "from the directory"},
		{"web_proxy_address", dir, dev.URL, "from the dev server at /"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Admin.UI.Enabled, cfg.Admin.UI.Insecure = true, true
			cfg.Admin.UI.WebPath, cfg.Admin.UI.WebProxyAddress = c.path, c.proxy
			s := startServer(t, cfg)
			t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			base := "http://" + s.Addr() + config.DefaultAdminUIPath
			if code, body := httpStatus(t, http.MethodGet, base+"/", ""); code != http.StatusOK || !strings.Contains(body, c.want) {
				t.Errorf("GET %s/: %d %q, want %q", config.DefaultAdminUIPath, code, body, c.want)
			}
			if code, body := httpStatus(t, http.MethodGet, base+"/api/overview", ""); code != http.StatusOK || strings.Contains(body, "from the") {
				t.Errorf("the admin API: %d %q, want Herald's", code, body)
			}
		})
	}
}
