package server

import (
	"net/http"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/transport/guard"
	"github.com/heraldhq/herald/transport/httpstream"
)

// mountHTTPTransports mounts the enabled HTTP transports on mux. New
// streams pass the same admission as WebSocket upgrades (refused with 503
// while the node drains, the per-address limits, the bound on
// unauthenticated connections). Emulation requests carry commands for
// streams that exist already, so they do not pass it.
func (s *Server) mountHTTPTransports(mux *http.ServeMux) {
	t := s.cfg.TransportsConfig
	base := httpstream.Config{
		Emulation:    t.Emulation.EmulationOptions,
		WriteTimeout: s.cfg.WebSocket.WriteTimeout,
		CheckOrigin:  guard.Origins(s.cfg.WebSocket.AllowedOrigins),
		Logger:       s.log,
		// Emulation's per-address rate limit counts the client behind a
		// trusted proxy, as admission does.
		ClientAddr: s.adm.ClientAddr,
	}
	server := func(c config.HTTPTransportConfig) *httpstream.Server {
		cfg := base
		cfg.StreamOptions = c.StreamOptions
		return httpstream.NewServer(s.hub, cfg)
	}
	uniServer := func(c config.UniTransportConfig) *httpstream.Server {
		cfg := base
		cfg.StreamOptions, cfg.UniOptions = c.StreamOptions, c.UniOptions
		return httpstream.NewServer(s.hub, cfg)
	}
	if t.HTTPStream.Enabled {
		mux.Handle(s.paths.HTTPStream, s.admit(server(t.HTTPStream).HTTPStream()))
	}
	if t.SSE.Enabled {
		mux.Handle(s.paths.SSE, s.admit(server(t.SSE).SSE()))
	}
	if t.HTTPStream.Enabled || t.SSE.Enabled {
		mux.Handle(s.paths.Emulation, httpstream.NewServer(s.hub, base).Emulation())
	}
	if t.UniHTTPStream.Enabled {
		mux.Handle(s.paths.UniHTTPStream, s.admit(uniServer(t.UniHTTPStream).UniHTTPStream()))
	}
	if t.UniSSE.Enabled {
		mux.Handle(s.paths.UniSSE, s.admit(uniServer(t.UniSSE).UniSSE()))
	}
}

// Where the HTTP transports are mounted by default (their handler_prefix
// keys), as in Centrifugo.
const (
	HTTPStreamPath    = "/connection/http_stream"
	SSEPath           = "/connection/sse"
	EmulationPath     = "/emulation"
	UniHTTPStreamPath = "/connection/uni_http_stream"
	UniSSEPath        = "/connection/uni_sse"
)
