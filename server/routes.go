package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/guard"
	"github.com/heraldhq/herald/transport/websocket"
)

// routes mounts every endpoint of the main listener and makes its HTTP
// server.
func (b *builder) routes() error {
	s, cfg := b.s, b.s.cfg
	mux := http.NewServeMux()
	// ops is where the endpoints for operators and back ends go: the
	// internal listener's mux when there is one (internal.go), else the
	// main one.
	ops := mux
	if cfg.InternalEnabled() {
		ops = http.NewServeMux()
	}
	s.mountWebSocket(mux)
	s.mountHTTPTransports(mux)
	s.h3 = s.newHTTP3() // http3.go
	if s.h3 != nil && s.h3.wt != nil {
		mux.Handle(s.paths.WebTransport, s.admit(s.webTransportServer(s.h3)))
	}
	if cfg.Init.Enabled {
		mux.HandleFunc(s.paths.Init, connInit) // conninit.go
	}
	ops.Handle("GET "+s.paths.Metrics, promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	ops.HandleFunc("GET "+config.HealthzPath, s.healthz)
	ops.HandleFunc("GET "+config.ReadyzPath, s.readyz)
	if cfg.Health.Enabled {
		ops.HandleFunc(s.paths.Health, centrifugoHealth)
	}
	if cfg.Admin.UI.Enabled && cfg.Admin.Address == "" {
		if err := s.mountAdminUI(pick(cfg.Admin.UI.External, mux, ops)); err != nil {
			return err
		}
	}
	if cfg.Swagger.Enabled {
		s.mountSwagger(ops) // swagger.go
	}
	if cfg.Debug.Enabled {
		mountPprof(ops, cfg.Debug.HandlerPrefix) // debug.go
		s.warnPprof()
	}
	if err := b.mountHTTPAPI(pick(cfg.HTTPAPI.External, mux, ops)); err != nil {
		return err
	}
	s.http = s.httpServer(mux)
	if s.h3 != nil {
		s.http.Handler = s.h3.serveHTTP3(s.http.Handler)
	}
	if cfg.HTTP.H2CExternal {
		s.http.Protocols = h2cProtocols() // h2c.go
	}
	if ops != mux {
		s.internal = s.httpServer(ops)
	}
	return nil
}

// pick is main when external is set, else ops: the listener of an
// endpoint that Centrifugo's '*.external' keeps on the public port.
func pick(external bool, main, ops *http.ServeMux) *http.ServeMux {
	if external {
		return main
	}
	return ops
}

// httpServer makes the HTTP server of a listener that serves h.
func (s *Server) httpServer(h http.Handler) *http.Server {
	// Headers must arrive within 10 s and an idle keep-alive connection is
	// closed after http.idle_timeout, so that neither holds a descriptor
	// for ever; request bodies are bounded by guard.ReadDeadline (the API
	// handler sets its own for its body, the same http_api.body_read_timeout,
	// and lifts it once the body is in). There is no ReadTimeout or
	// WriteTimeout: they would also cut hijacked WebSocket connections and
	// long API calls.
	return &http.Server{
		Handler:           guard.ReadDeadline(s.cfg.HTTPAPI.BodyReadTimeoutOrDefault(), s.log, h),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       s.cfg.HTTP.IdleTimeoutOrDefault(),
	}
}

// mountWebSocket mounts both WebSocket endpoints behind the same admission
// and drain checks.
func (s *Server) mountWebSocket(mux *http.ServeMux) {
	upgrades := http.NewServeMux()
	if !s.cfg.WebSocket.Disabled {
		upgrades.Handle(s.paths.WebSocket, s.ws)
	}
	if s.cfg.UniWebSocket.Enabled {
		upgrades.Handle(s.paths.UniWebSocket, s.uniWS.UniHandler(func(c *websocket.UniConn, r *http.Request) websocket.UniReceiver {
			return guard.Open(r, func(ticket guard.Ticket) websocket.UniReceiver {
				return s.hub.Open(c, hub.ConnInfo{RemoteAddr: c.RemoteAddr(), Transport: hub.TransportUniWebSocket, Unidirectional: true, Header: r.Header, Admission: ticket})
			})
		}))
	}
	entry := s.admit(upgrades)
	if !s.cfg.WebSocket.Disabled {
		mux.Handle(s.paths.WebSocket, entry)
	}
	if s.cfg.UniWebSocket.Enabled {
		mux.Handle(s.paths.UniWebSocket, entry)
	}
}

// mountHTTPAPI mounts the HTTP API: its methods are under the prefix, and
// the prefix itself is the single endpoint ({"method":…,"params":…}).
// Without a key (and not insecure) the prefix explains how to turn it on.
func (b *builder) mountHTTPAPI(mux *http.ServeMux) error {
	s, cfg := b.s, b.s.cfg
	prefix := s.paths.API
	switch {
	case cfg.HTTPAPI.Disabled:
	case cfg.HTTPAPI.Key != "" || cfg.HTTPAPI.Insecure:
		apiCfg := cfg.HTTPAPI.API()
		apiCfg.Logger, apiCfg.TracerProvider = s.log, b.tp
		handler, err := api.NewHandler(s.hub, apiCfg)
		if err != nil {
			return fmt.Errorf("http_api: %w", err)
		}
		var entry http.Handler = http.StripPrefix(prefix, handler)
		if cfg.HTTPAPI.RequireClientCert {
			entry = requireClientCert(entry)
		}
		entry = guard.CORS{
			Allow:   guard.Listed(cfg.HTTPAPI.AllowedOrigins),
			Methods: "POST",
			Headers: "Content-Type, X-API-Key, Authorization, X-Centrifugo-Error-Mode",
		}.Handler(entry)
		mux.Handle(prefix+"/", entry)
		mux.Handle(prefix, entry)
	default:
		mux.Handle(prefix+"/", api.Off(apiOffHint))
		mux.Handle(prefix, api.Off(apiOffHint))
	}
	return nil
}
