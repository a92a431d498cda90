package server

import (
	"net/http"
	"time"

	"golang.org/x/time/rate"
)

// admit puts h, an endpoint that opens connections, behind the node's
// connection rate (client.connection_rate_limit) and then the admission
// checks. The rate is Centrifugo's (v6.9.1 middleware/connlimit.go): a
// bucket of N connections refilled at one a second, node-wide, a refusal
// answered 503 before anything is opened.
func (s *Server) admit(h http.Handler) http.Handler {
	next := s.adm.Handler(h)
	n := s.cfg.Client.ConnectionRateLimit
	if n <= 0 {
		return next
	}
	if s.connRate == nil {
		s.connRate = rate.NewLimiter(rate.Every(time.Second), n)
	}
	lim := s.connRate
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions && !lim.Allow() {
			w.Header().Set("Connection", "close")
			http.Error(w, "client.connection_rate_limit: too many new connections on this node, retry later", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}
