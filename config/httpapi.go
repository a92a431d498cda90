package config

import "strings"

// prefixProblems checks http_api.handler_prefix: a path of its own.
func (c Config) prefixProblems(bad func(key, format string, args ...any)) {
	raw := c.HTTPAPI.HandlerPrefix
	if raw == "" {
		return
	}
	p := c.HTTPAPI.Prefix()
	if !strings.HasPrefix(raw, "/") || raw == "/" || strings.ContainsAny(raw, " ?#{}") {
		bad("http_api.handler_prefix", "%q: want a path of its own starting with /, such as /api", raw)
		return
	}
	overlaps := func(other string) bool {
		return p == other || strings.HasPrefix(p, other+"/") || strings.HasPrefix(other, p+"/")
	}
	// The main listener's own endpoints, which the prefix must not cover
	// or sit under.
	for _, r := range []string{"/connection", "/emulation", "/metrics", "/healthz", "/readyz", "/debug"} {
		if overlaps(r) {
			bad("http_api.handler_prefix", "%q overlaps Herald's endpoint %s: choose another path", raw, r)
			return
		}
	}
	if c.Admin.UI.Enabled && c.Admin.Address == "" && overlaps(c.Admin.UI.MountPath()) {
		bad("http_api.handler_prefix", "%q overlaps admin.ui.path %q on the main listener: choose another path", raw, c.Admin.UI.MountPath())
	}
}
