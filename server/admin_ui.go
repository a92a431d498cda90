package server

import (
	"fmt"
	"net/http"

	"github.com/heraldhq/herald/admin"
)

// mountAdminUI serves the admin web UI under the configured path on mux
// (the admin listener's, or the main one's).
func (s *Server) mountAdminUI(mux *http.ServeMux) error {
	ui := s.cfg.Admin.UI
	p := ui.MountPath()
	h, err := admin.New(s.hub, admin.Config{
		Password: ui.Password, TokenSecret: ui.TokenSecret, Insecure: ui.Insecure,
		CookiePath: p + "/", Logger: s.log,
	})
	if err != nil {
		return fmt.Errorf("admin.ui: %w", err)
	}
	mux.Handle(p+"/", http.StripPrefix(p, h))
	mux.Handle(p, http.RedirectHandler(p+"/", http.StatusFound))
	s.log.Info("admin UI", "path", p+"/", "listener", map[bool]string{true: "admin", false: "main"}[s.cfg.Admin.Address != ""], "insecure", ui.Insecure)
	return nil
}
