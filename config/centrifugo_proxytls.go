package config

import "strings"

// proxyHTTPTLS maps a proxy's http.tls, the TLS of Centrifugo's HTTP proxy
// client for an https endpoint (v6.9.1 internal/proxy/http.go:54-60, used
// when enabled), to Herald's proxies[].tls: the same keys as
// engine.redis.tls, in a section that has no 'enabled' (an https URL
// always dials with TLS; the section replaces the default roots and name).
func proxyHTTPTLS(m *cfMapper, c cfCtx, v any) {
	m.convertTLS(c, v, false)
	root, key, _ := m.heraldTarget(c)
	section := root
	for _, part := range strings.Split(key, ".") {
		next, ok := section[part].(map[string]any)
		if !ok {
			return // off: nothing was written
		}
		section = next
	}
	delete(section, "enabled")
}
