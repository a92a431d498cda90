package server

import (
	"net/http"
	"net/http/pprof"
)

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
