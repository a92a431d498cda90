package server

import (
	"net/http"
	"net/http/pprof"
)

// warnPprof says at start-up where debug.enabled serves pprof, as
// Centrifugo warns of its debug mode (v6.9.1 internal/app/log.go): anyone
// who reaches that listener can profile the node and read its command
// line.
func (s *Server) warnPprof() {
	listener := "main"
	if s.cfg.InternalEnabled() {
		listener = "internal"
	}
	s.log.Warn("debug.enabled: pprof is served; keep this listener private", "path", s.cfg.Debug.HandlerPrefix+"/", "listener", listener)
}

// mountPprof mounts Go's pprof handlers under prefix ("/debug/pprof"):
// on the admin listener (admin.address) always, and where Centrifugo's
// debug.enabled puts them, the listener of the operators' endpoints
// (v6.9.1 internal/app/mux.go).
func mountPprof(mux *http.ServeMux, prefix string) {
	mux.HandleFunc(prefix+"/", pprof.Index)
	mux.HandleFunc(prefix+"/cmdline", pprof.Cmdline)
	mux.HandleFunc(prefix+"/profile", pprof.Profile)
	mux.HandleFunc(prefix+"/symbol", pprof.Symbol)
	mux.HandleFunc(prefix+"/trace", pprof.Trace)
}
