package server

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"

	"github.com/heraldhq/herald/admin"
	"github.com/heraldhq/herald/config"
)

// mountAdminUI serves the admin web UI under the configured path on mux
// (the admin listener's, or the main one's).
func (s *Server) mountAdminUI(mux *http.ServeMux) error {
	ui := s.cfg.Admin.UI
	p := ui.MountPath()
	pages, err := adminPages(ui)
	if err != nil {
		return err
	}
	h, err := admin.New(s.hub, admin.Config{
		Password: ui.Password, TokenSecret: ui.TokenSecret, Insecure: ui.Insecure,
		CookiePath: p + "/", Logger: s.log, Pages: pages,
	})
	if err != nil {
		return fmt.Errorf("admin.ui: %w", err)
	}
	mux.Handle(p+"/", http.StripPrefix(p, h))
	mux.Handle(p, http.RedirectHandler(p+"/", http.StatusFound))
	s.log.Info("admin UI", "path", p+"/", "listener", map[bool]string{true: "admin", false: "main"}[s.cfg.Admin.Address != ""], "insecure", ui.Insecure)
	return nil
}

// adminPages serves the admin UI's pages from where admin.ui.web_proxy_address
// or web_path say, proxy first as in Centrifugo; nil for the built-in
// ones.
func adminPages(ui config.AdminUIConfig) (http.Handler, error) {
	switch {
	case ui.WebProxyAddress != "":
		u, err := url.Parse(ui.WebProxyAddress)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("admin.ui.web_proxy_address: %q: want an http:// or https:// address", ui.WebProxyAddress)
		}
		return httputil.NewSingleHostReverseProxy(u), nil
	case ui.WebPath != "":
		return http.FileServerFS(os.DirFS(ui.WebPath)), nil
	}
	return nil, nil
}
