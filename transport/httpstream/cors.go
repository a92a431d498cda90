package httpstream

import (
	"net/http"
	"net/url"
	"strings"
)

// SameOrigin is the default Config.CheckOrigin: no Origin header (not a
// browser), or an Origin whose host is the request's.
func SameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// cors refuses browsers from origins CheckOrigin does not accept, answers
// their preflight requests, and gives the accepted ones the headers that
// let the page read the response. centrifuge-js sends its POSTs with
// Content-Type application/json or application/octet-stream, which is not
// a "simple" request, so a cross-origin page always preflights; it does
// not send credentials, but allowing them costs nothing for an origin that
// is named explicitly and helps clients that do (EventSource
// withCredentials).
func (s *Server) cors(methods string, next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if !s.cfg.CheckOrigin(r) {
			s.cfg.Logger.Debug("http transport: origin refused (403)", "origin", origin, "host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr)
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return
		}
		if origin != "" {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", methods)
				if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
					// The origin is trusted; whatever headers its page
					// sends are fine with us, and no header changes
					// what the handlers do beyond Content-Type.
					h.Set("Access-Control-Allow-Headers", req)
				}
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if r.Method == http.MethodOptions {
			w.Header().Set("Allow", methods)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next(w, r)
	})
}
