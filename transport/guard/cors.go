package guard

import (
	"log/slog"
	"net/http"
)

// CORS answers browsers' preflight requests and gives the requests of the
// origins it accepts the headers that let their pages read the response.
type CORS struct {
	// Allow accepts a request's origin (see Origins and Listed). Nil
	// accepts none: Handler returns next as it is.
	Allow func(r *http.Request) bool
	// Methods are the methods a preflight is told are allowed, such as
	// "POST, OPTIONS".
	Methods string
	// Headers are the request headers a preflight is told are allowed.
	// Empty: whatever headers the preflight asks for, for endpoints where
	// no header changes what an accepted origin may do.
	Headers string
	// Credentials lets the page send cookies and read the response of a
	// request with credentials (Access-Control-Allow-Credentials), which
	// costs nothing for an origin that is named explicitly.
	Credentials bool
	// Refuse answers a request from an origin Allow does not accept with
	// 403, and any OPTIONS request that is not an accepted preflight with
	// 204 and the Allow header, so next sees neither. Otherwise such a
	// request goes on to next without CORS headers, and the browser hides
	// the response from the page.
	Refuse bool
	// Logger, when set, is told at debug level of every refusal.
	Logger *slog.Logger
}

// Handler puts next behind c.
func (c CORS) Handler(next http.Handler) http.Handler {
	if c.Allow == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		accepted := c.Allow(r)
		if !accepted && c.Refuse {
			if c.Logger != nil {
				c.Logger.Debug("origin refused (403)", "origin", origin, "host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr)
			}
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return
		}
		if origin != "" && accepted {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			if c.Credentials {
				h.Set("Access-Control-Allow-Credentials", "true")
			}
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", c.Methods)
				if c.Headers != "" {
					h.Set("Access-Control-Allow-Headers", c.Headers)
				} else if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
					h.Set("Access-Control-Allow-Headers", req)
				}
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if c.Refuse && r.Method == http.MethodOptions {
			w.Header().Set("Allow", c.Methods)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
