package api

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// authorized checks the API key in Centrifugo's order: X-API-Key when the
// header is present, otherwise "Authorization: apikey <key>"; when that
// fails too and Config.AllowKeyInQuery is set, the api_key query
// parameter. Keys are compared in constant time so that response timing
// does not reveal a key's prefix.
func (a *handler) authorized(r *http.Request) bool {
	if a.cfg.Insecure {
		return true
	}
	// "X-Api-Key" is the canonical form of X-API-Key; spelling it so
	// spares Header.Get an allocation to canonicalize it.
	if v := r.Header.Get("X-Api-Key"); v != "" {
		if a.keyMatches(v) {
			return true
		}
	} else if v := r.Header.Get("Authorization"); v != "" {
		scheme, key, ok := strings.Cut(strings.TrimSpace(v), " ")
		if ok && strings.EqualFold(scheme, "apikey") && a.keyMatches(strings.TrimSpace(key)) {
			return true
		}
	}
	if a.cfg.AllowKeyInQuery && r.URL.RawQuery != "" {
		if v := r.URL.Query().Get("api_key"); v != "" && a.keyMatches(v) {
			return true
		}
	}
	return false
}

func (a *handler) keyMatches(v string) bool {
	return subtle.ConstantTimeCompare([]byte(v), a.key) == 1
}
