// Package server wires a Herald node together from a config.Config: the engine,
// the hub, the WebSocket transport and the HTTP endpoints.
package server

// The docs' metrics tables are rendered from the collectors a node
// registers (metricsdoc_test.go); this rewrites them. It needs the
// services of scripts/services.sh (eval "$(scripts/services.sh env)").
//go:generate go test -run ^TestMetricsDocumented$ -update

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/consumer"
	"github.com/heraldhq/herald/engine/redis"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/proxy"
	"github.com/heraldhq/herald/sqlauth"
	"github.com/heraldhq/herald/stateoutput"
	"github.com/heraldhq/herald/transport/guard"
	"github.com/heraldhq/herald/transport/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/time/rate"
)

// Version is Herald's version, sent to clients in the connect reply.
const Version = "0.1.0"

// WebSocketPath is where clients connect by default
// (websocket.handler_prefix), as in Centrifugo.
const WebSocketPath = "/connection/websocket"

// UniWebSocketPath is the unidirectional WebSocket endpoint's default path
// (uni_websocket.handler_prefix), as in Centrifugo.
const UniWebSocketPath = "/connection/uni_websocket"

// Server is one running Herald node.
type Server struct {
	cfg   config.Config
	paths config.Paths // where each endpoint is mounted
	log   *slog.Logger
	hub   *hub.Hub
	ws    *websocket.Server
	uniWS *websocket.Server // uni_websocket's, with its own options; nil when off
	http  *http.Server
	ln    net.Listener
	done  chan error

	registry *prometheus.Registry
	// collectors are Herald's own, registered in registry (register).
	collectors []prometheus.Collector
	admin      *http.Server
	adminLn    net.Listener
	// The internal listener (internal.go); nil when off.
	internal    *http.Server
	internalLn  net.Listener
	internalTLS *listenerTLS
	adm         *guard.Admission    // every endpoint that opens connections passes it
	connRate    *rate.Limiter       // client.connection_rate_limit, shared by those endpoints; nil: off (connrate.go)
	proxy       *proxy.Router       // nil without proxies
	sqlAuth     *sqlauth.Authorizer // nil without SQL checks
	// stateOutputs: channel.state.outputs (stateoutput.go); nil without.
	stateOutputs *stateoutput.Set
	// rateLimiter keeps the redis_user_command buckets in a Redis of
	// their own (ratelimit.go); nil: the engine keeps them.
	rateLimiter *redis.RateLimiter

	tls       *listenerTLS   // the main listener's; nil: plain TCP (tls.go)
	adminTLS  *listenerTLS   // nil: plain TCP
	acmeHTTP  *http.Server   // the HTTP-01 challenge listener; nil without ACME
	uniGRPC   *uniGRPC       // nil without uni_grpc (unigrpc.go)
	h3        *http3Listener // nil without http.http3 (http3.go)
	acmeLn    net.Listener
	spans     *sdktrace.TracerProvider // nil without tracing
	grpc      *grpcAPI                 // nil without grpc_api (grpcapi.go)
	consumers *consumer.Group          // nil without enabled consumers
	graphite  *graphitePusher          // nil without graphite (graphite.go)
}

// New builds a node from cfg; Start makes it listen. It builds the node's
// parts in steps (build.go); when one fails, what the steps before it
// built is released, the engine's connections included.
func New(cfg config.Config, log *slog.Logger) (_ *Server, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := &builder{s: &Server{cfg: cfg, paths: cfg.Paths(), log: log, done: make(chan error, 1)}}
	defer func() {
		if err != nil {
			b.rollback()
		}
	}()
	for _, step := range b.steps() {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return b.s, nil
}

// upgradePaths are the WebSocket endpoints whose upgrade requests the
// accept loop reads itself (see guard.Listener).
func (s *Server) upgradePaths() []string {
	var paths []string
	if !s.cfg.WebSocket.Disabled {
		paths = append(paths, s.paths.WebSocket)
	}
	if s.cfg.UniWebSocket.Enabled {
		paths = append(paths, s.paths.UniWebSocket)
	}
	return paths
}

// Hub is the node's hub, for embedding and tests.
func (s *Server) Hub() *hub.Hub { return s.hub }

// Start starts the engine and the hub and begins accepting connections.
func (s *Server) Start(ctx context.Context) error {
	if err := s.hub.Start(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.Address)
	if err != nil {
		_ = s.hub.Shutdown(ctx)
		return fmt.Errorf("listen on %s: %w", s.cfg.Address, err)
	}
	if n := s.cfg.HTTP.NotSentLowat; n > 0 {
		ln = lowatListener{ln, n}
	}
	s.ln = ln
	if s.h3 != nil {
		// Before the TCP listener serves: its responses advertise the
		// UDP port.
		if err := s.h3.start(ln.Addr()); err != nil {
			_ = ln.Close()
			_ = s.hub.Shutdown(ctx)
			return err
		}
	}
	var serving net.Listener = ln
	if s.tls != nil {
		// net/http must see the *tls.Conn itself to offer HTTP/2 and fill
		// in Request.TLS, so the accept loop does not read upgrades here.
		serving = s.tls.listen(ln)
		s.http.ErrorLog = httpErrorLog(s.log, "main")
	} else if !s.cfg.WebSocket.NetHTTPUpgrade {
		serving = guard.NewListener(ln, s.upgradePaths(), s.http.Handler, s.cfg.HTTP.IdleTimeoutOrDefault(), s.http.ReadHeaderTimeout, s.log)
	}
	go func() {
		err := s.http.Serve(serving)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	if err := s.startInternal(); err != nil {
		_ = s.http.Close()
		s.h3.close()
		_ = s.hub.Shutdown(ctx)
		return err
	}
	if s.cfg.Admin.Address != "" {
		if err := s.startAdmin(); err != nil {
			_ = s.http.Close()
			s.h3.close()
			s.closeInternal()
			_ = s.hub.Shutdown(ctx)
			return err
		}
	}
	if err := s.startACMEChallenge(); err != nil {
		_ = s.http.Close()
		s.h3.close()
		s.closeInternal()
		if s.admin != nil {
			_ = s.admin.Close()
		}
		_ = s.hub.Shutdown(ctx)
		return err
	}
	// The gRPC listeners come last: a failure closes what started before.
	closeStarted := func() {
		_ = s.http.Close()
		s.h3.close()
		s.closeInternal()
		if s.admin != nil {
			_ = s.admin.Close()
		}
		if s.acmeHTTP != nil {
			_ = s.acmeHTTP.Close()
		}
	}
	if err := s.startUniGRPC(); err != nil {
		closeStarted()
		_ = s.hub.Shutdown(ctx)
		return err
	}
	if err := s.startGRPCAPI(); err != nil {
		closeStarted()
		s.stopUniGRPC(ctx)
		_ = s.hub.Shutdown(ctx)
		return err
	}
	if s.consumers != nil {
		s.consumers.Start()
	}
	s.graphite.start()
	if s.h3 != nil {
		s.log.Info("HTTP/3 listening", "address", s.h3.Addr().String(), "webtransport", s.h3.wt != nil, "webtransport_path", s.paths.WebTransport)
	}
	s.log.Info("herald listening", "address", ln.Addr().String(), "tls", s.tls != nil, "websocket", s.paths.WebSocket, "api", s.paths.API, "metrics", s.paths.Metrics, "websocket_poller", s.ws.Poller(), "engine", s.cfg.Engine.Type, "version", Version)
	return nil
}

// Addr is the address the node listens on, once started.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// AdminAddr is the admin listener's address, once started; "" when off.
func (s *Server) AdminAddr() string {
	if s.adminLn == nil {
		return ""
	}
	return s.adminLn.Addr().String()
}

// Done reports the HTTP server stopping on its own, with its error.
func (s *Server) Done() <-chan error { return s.done }

// Shutdown drains the node: readyz answers 503 and new WebSocket
// connections are refused at once; clients are closed with 3001 spread
// over shutdown.drain_window; in-flight API calls finish; then the engine
// stops.
func (s *Server) Shutdown(ctx context.Context) error {
	s.adm.Drain()
	var errs []error
	if err := s.graphite.stop(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := s.hub.Drain(ctx, s.cfg.Shutdown.DrainWindow); err != nil {
		errs = append(errs, fmt.Errorf("drain: %w", err))
	}
	if s.admin != nil {
		if err := s.admin.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("admin: %w", err))
		}
	}
	if s.acmeHTTP != nil {
		if err := s.acmeHTTP.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("tls_autocert.http_address: %w", err))
		}
	}
	if err := s.http.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("http: %w", err))
	}
	if err := s.h3.shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := s.shutdownInternal(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := s.stopGRPCAPI(ctx); err != nil {
		errs = append(errs, err)
	}
	// Before the hub: a consumer acknowledges only what the hub applied.
	if s.consumers != nil {
		if err := s.consumers.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.hub.Shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	s.stopUniGRPC(ctx)
	if err := s.ws.Close(); err != nil {
		errs = append(errs, fmt.Errorf("websocket: %w", err))
	}
	if s.uniWS != nil {
		if err := s.uniWS.Close(); err != nil {
			errs = append(errs, fmt.Errorf("uni_websocket: %w", err))
		}
	}
	if s.proxy != nil {
		s.proxy.Close()
	}
	if s.sqlAuth != nil {
		s.sqlAuth.Close()
	}
	// After the hub, which finishes the batch in flight.
	if s.stateOutputs != nil {
		s.stateOutputs.Close()
	}
	// After the hub, whose commands take from it.
	if s.rateLimiter != nil {
		if err := s.rateLimiter.Close(); err != nil {
			errs = append(errs, fmt.Errorf("rate limit redis: %w", err))
		}
	}
	// Last, so that the spans of the calls above are sent too.
	if s.spans != nil {
		if err := s.spans.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("opentelemetry: flush spans: %w", err))
		}
	}
	return errors.Join(errs...)
}

// apiOffHint tells a caller of a node without an API key how to turn the
// API on.
const apiOffHint = "set http_api.key in the configuration and send it in the X-API-Key header, " +
	"or set http_api.insecure: true (development only: no key is checked)"

// healthz answers while the process serves HTTP at all.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeStatus(w, http.StatusOK, map[string]any{"status": "ok"})
}

// readyz answers 200 while the node takes new connections: not draining,
// and its engine is reachable when the engine can tell.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.adm.Draining() {
		writeStatus(w, http.StatusServiceUnavailable, map[string]any{"status": "draining"})
		return
	}
	if rc, ok := s.hub.Engine().(interface{ Ready(context.Context) error }); ok {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := rc.Ready(ctx); err != nil {
			writeStatus(w, http.StatusServiceUnavailable, map[string]any{"status": "engine unavailable", "error": err.Error()})
			return
		}
	}
	body := map[string]any{"status": "ready", "node": s.hub.NodeID()}
	if s.consumers != nil {
		// Reported, not a reason for 503: every node reads the same
		// sources, so a source down would take all of them out of the
		// load balancer while clients could still be served.
		body["consumers"] = s.consumers.Health()
	}
	writeStatus(w, http.StatusOK, body)
}

// centrifugoHealth is Centrifugo's health endpoint (health.enabled): 200
// with an empty JSON object, whatever the method, as Centrifugo answers.
func centrifugoHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}"))
}

func writeStatus(w http.ResponseWriter, code int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// startAdmin serves pprof on its own listener, never on the public one.
func (s *Server) startAdmin() error {
	mux := http.NewServeMux()
	mountPprof(mux, config.PprofPath) // debug.go
	mux.Handle(s.paths.Metrics, promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	if s.cfg.Admin.UI.Enabled {
		if err := s.mountAdminUI(mux); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", s.cfg.Admin.Address)
	if err != nil {
		return fmt.Errorf("admin listener on %s: %w", s.cfg.Admin.Address, err)
	}
	s.adminLn = ln
	s.admin = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	serving := s.adminTLS.listen(ln)
	if s.adminTLS != nil {
		s.admin.ErrorLog = httpErrorLog(s.log, "admin")
	}
	// Process-wide settings of the runtime: only set when asked for, so an
	// embedding application's own choice stands otherwise.
	if f := s.cfg.Admin.MutexProfileFraction; f > 0 {
		runtime.SetMutexProfileFraction(f)
	}
	if r := s.cfg.Admin.BlockProfileRate; r > 0 {
		runtime.SetBlockProfileRate(r)
	}
	go func() { _ = s.admin.Serve(serving) }()
	s.log.Info("admin listener (pprof)", "address", ln.Addr().String(), "tls", s.adminTLS != nil)
	return nil
}
