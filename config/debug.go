package config

import "strings"

// DebugConfig is Centrifugo's debug section (v6.9.1 internal/app/mux.go):
// Go's pprof handlers on the listener of the operators' endpoints, the
// internal one when internal.address is set, else the main one. Herald's
// admin.address serves them too, on a listener of its own.
type DebugConfig struct {
	Enabled       bool   `yaml:"enabled" doc:"serve pprof at 'debug.handler_prefix' on the internal listener ('internal.address'), or on the main one without it, as Centrifugo's 'debug.enabled'; anyone who reaches it can profile the node, so keep that listener private"`
	HandlerPrefix string `yaml:"handler_prefix" default:"/debug/pprof" doc:"the path of the pprof handlers ('/debug/pprof/', '.../profile', ...)"`
}

// debugProblems checks the debug section for Validate.
func (c Config) debugProblems() Problems {
	if c.Debug.Enabled && (!strings.HasPrefix(c.Debug.HandlerPrefix, "/") || strings.HasSuffix(c.Debug.HandlerPrefix, "/")) {
		return Problems{{Key: "debug.handler_prefix", Message: "a path that starts with '/' and does not end with one, e.g. '/debug/pprof'"}}
	}
	return nil
}
