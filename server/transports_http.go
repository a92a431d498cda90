package server

import (
	"net/http"

	"github.com/heraldhq/herald/transport/httpstream"
)

// mountHTTPTransports mounts the enabled HTTP transports on mux. New
// streams pass the same checks as WebSocket upgrades: refused with 503
// while the node drains, then admission (the per-address rate and the
// bound on unauthenticated connections). Emulation requests carry
// commands for streams that exist already, so they pass neither.
func (s *Server) mountHTTPTransports(mux *http.ServeMux, adm *admission) {
	t := s.cfg.TransportsConfig
	base := httpstream.Config{
		MaxEmulationBodySize: t.Emulation.MaxRequestBodySize,
		WriteTimeout:         s.cfg.WebSocket.WriteTimeout.D(),
		CheckOrigin:          originChecker(s.cfg.WebSocket.AllowedOrigins),
		Opened:               releaseAdmission,
		Logger:               s.log,
		// Emulation's per-address rate limit counts the client behind a
		// trusted proxy, as admission does.
		ClientAddr: func(r *http.Request) string {
			if a, ok := clientAddr(r, adm.trusted); ok {
				return a.String()
			}
			return r.RemoteAddr
		},
	}
	server := func(c HTTPTransportConfig) *httpstream.Server {
		cfg := base
		cfg.MaxRequestBodySize = c.MaxRequestBodySize
		return httpstream.NewServer(s.hub, cfg)
	}
	if t.HTTPStream.Enabled {
		mux.Handle(HTTPStreamPath, s.opening(adm, server(t.HTTPStream).HTTPStream()))
	}
	if t.SSE.Enabled {
		mux.Handle(SSEPath, s.opening(adm, server(t.SSE).SSE()))
	}
	if t.HTTPStream.Enabled || t.SSE.Enabled {
		mux.Handle(EmulationPath, httpstream.NewServer(s.hub, base).Emulation())
	}
	if t.UniHTTPStream.Enabled {
		mux.Handle(UniHTTPStreamPath, s.opening(adm, server(t.UniHTTPStream).UniHTTPStream()))
	}
	if t.UniSSE.Enabled {
		mux.Handle(UniSSEPath, s.opening(adm, server(t.UniSSE).UniSSE()))
	}
}

// opening guards an endpoint that opens connections. A CORS preflight
// opens none, so it goes straight through.
func (s *Server) opening(adm *admission, next http.Handler) http.Handler {
	guarded := adm.guard(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		if s.draining.Load() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "node is shutting down: connect to another node", http.StatusServiceUnavailable)
			return
		}
		guarded.ServeHTTP(w, r)
	})
}
