package config

import (
	"net/url"
	"strings"
)

// AdminUIConfig turns on the admin web UI (package admin): on the admin
// listener when admin.address is set, else under Path on the main one.
type AdminUIConfig struct {
	Enabled     bool   `yaml:"enabled" doc:"the admin web UI ([admin.md](admin.md)): on the admin listener when 'admin.address' is set, else on the main listener under 'admin.ui.path'"`
	Password    string `yaml:"password" doc:"the password an operator logs in with (at least 8 characters)"`
	TokenSecret string `yaml:"token_secret" doc:"HMAC key of admin tokens (JWTs with '\"admin\": true') accepted instead of the password (at least 16 characters)"`
	Insecure    bool   `yaml:"insecure" doc:"no login at all, for local development only; a warning is logged at startup"`
	Path        string `yaml:"path" default:"/admin" doc:"where the UI is served ('/admin/')"`
	External    bool   `yaml:"external" doc:"with 'internal.address' (and no 'admin.address'): serve the UI on the main listener, not the internal one (Centrifugo's 'admin.external')"`
	// WebPath and WebProxyAddress are Centrifugo's admin.web_path and
	// web_proxy_address (v6.9.1 internal/admin/handlers.go).
	WebPath         string `yaml:"web_path" doc:"serve the UI's pages from this directory (a build of Herald's admin UI, [admin.md](admin.md)) instead of the ones in the binary; the API stays Herald's"`
	WebProxyAddress string `yaml:"web_proxy_address" doc:"proxy the UI's pages to this address ('http://localhost:5173', a UI development server) instead of serving them; over 'web_path'"`
}

// DefaultAdminUIPath is where the admin UI is served by default.
const DefaultAdminUIPath = "/admin"

// MountPath is the UI's mount path, without a trailing slash.
func (u AdminUIConfig) MountPath() string {
	if u.Path == "" {
		return DefaultAdminUIPath
	}
	return strings.TrimSuffix(u.Path, "/")
}

func (u AdminUIConfig) validate(bad func(key, format string, args ...any)) {
	if !u.Enabled {
		return
	}
	if u.Password == "" && u.TokenSecret == "" && !u.Insecure {
		bad("admin.ui.enabled", "the admin UI needs admin.ui.password or admin.ui.token_secret (or admin.ui.insecure: true, for local development only)")
	}
	if u.Password != "" && len(u.Password) < 8 {
		bad("admin.ui.password", "too short: use at least 8 characters")
	}
	if u.TokenSecret != "" && len(u.TokenSecret) < 16 {
		bad("admin.ui.token_secret", "too short: use at least 16 characters (32 random bytes is better)")
	}
	if a := u.WebProxyAddress; a != "" {
		if p, err := url.Parse(a); err != nil || p.Host == "" || (p.Scheme != "http" && p.Scheme != "https") {
			bad("admin.ui.web_proxy_address", "%q: want an http:// or https:// address", a)
		}
	}
}
