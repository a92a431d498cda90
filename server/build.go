package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/tracing"
	"github.com/heraldhq/herald/transport/guard"
	"github.com/heraldhq/herald/transport/websocket"
)

// builder carries what New's steps make for the steps after them, and
// what to release if a later step fails: an engine holds connections to
// its broker, the SQL checks a listener, the proxy its clients, the
// epoll read path a descriptor and goroutines.
type builder struct {
	s    *Server
	pair *auth.Pair           // nil without token keys
	tp   trace.TracerProvider // nil without tracing
	eng  engine.Engine
	undo []func()
}

// onFailure registers release, run if a later step fails.
func (b *builder) onFailure(release func()) { b.undo = append(b.undo, release) }

// rollback releases what the steps built, the last built first.
func (b *builder) rollback() {
	for i := len(b.undo) - 1; i >= 0; i-- {
		b.undo[i]()
	}
	b.undo = nil
}

// steps are New's steps in order: each uses what the ones before made.
func (b *builder) steps() []func() error {
	return []func() error{
		b.tokens, b.tracing, b.engine, b.rateLimiter, b.proxy, b.stateOutputs, b.sqlAuth, b.hub, b.websocket,
		b.listenerTLS, b.metrics, b.graphite, b.admission, b.routes, b.grpcAPI, b.consumers,
	}
}

func (b *builder) tokens() (err error) {
	if b.s.cfg.Client.InsecureSkipTokenSignatureVerify {
		b.s.log.Warn("client.insecure_skip_token_signature_verify: token signatures are not checked, anyone can connect as any user; for testing only")
	}
	b.pair, err = b.s.cfg.TokenVerifiers(b.s.log)
	return err
}

func (b *builder) tracing() (err error) {
	spans, tp, err := newTracing(b.s.cfg)
	if err != nil || spans == nil {
		return err
	}
	b.s.spans, b.tp = spans, tp
	b.onFailure(func() { _ = spans.Shutdown(context.Background()) })
	return nil
}

// engine connects the engine under a node id made of the node's name (or
// the host's) and the process id.
func (b *builder) engine() (err error) {
	name := b.s.cfg.Name
	if name == "" {
		name, _ = os.Hostname()
	}
	if b.eng, err = newEngine(b.s.cfg, name+"-"+strconv.Itoa(os.Getpid()), b.s.log); err != nil {
		return err
	}
	eng := b.eng
	b.onFailure(func() { _ = eng.Close() })
	return nil
}

func (b *builder) proxy() (err error) {
	if b.s.proxy, err = newProxy(b.s.cfg, b.s.log, b.tp); err != nil || b.s.proxy == nil {
		return err
	}
	b.onFailure(b.s.proxy.Close)
	return nil
}

// sqlAuth connects the SQL checks, whose listener runs from here.
func (b *builder) sqlAuth() (err error) {
	if b.s.sqlAuth, err = newSQLAuth(context.Background(), b.s.cfg, b.s.log, b.tp); err != nil || b.s.sqlAuth == nil {
		return err
	}
	b.onFailure(b.s.sqlAuth.Close)
	return nil
}

// hub builds the hub on the engine. Until Start it runs nothing of its
// own, so a failure later has only the engine to close, which the engine
// step does.
func (b *builder) hub() (err error) {
	cfg := b.s.cfg.Hub(Version)
	cfg.Engine, cfg.Logger = b.eng, b.s.log
	if b.s.rateLimiter != nil {
		cfg.RateLimiter = b.s.rateLimiter
	}
	if b.pair != nil {
		cfg.Tokens = b.pair
	}
	if b.tp != nil {
		cfg.Engine = tracing.WrapEngine(b.eng, b.tp)
	}
	// The SQL checks decide their namespaces first, then the proxy its
	// events, then the channel state outputs, then the hub's defaults
	// (hub.Chain).
	var chain []hub.Handlers
	if m := b.s.cfg.RPC.RPCPingMethod(); m != "" {
		chain = append(chain, hub.RPCPing(m))
	}
	if sa := b.s.sqlAuth; sa != nil {
		chain = append(chain, sa.Handlers())
		if sa.HasRowChecks() {
			cfg.RowCheck = sa
		}
	}
	if b.s.proxy != nil {
		chain = append(chain, b.s.proxy.Handlers())
	}
	if o := b.s.stateOutputs; o != nil {
		chain = append(chain, hub.Handlers{OnChannelState: o.OnChannelState})
	}
	cfg.Handlers = hub.Chain(chain...)
	b.s.hub, err = hub.New(cfg)
	return err
}

func (b *builder) websocket() (err error) {
	cfg, h, log := b.s.cfg, b.s.hub, b.s.log
	keepHeader := proxyHeaderKeeper(cfg)
	wsCfg := cfg.WebSocket.Transport()
	wsCfg.CheckOrigin = guard.Origins(cfg.WebSocket.AllowedOrigins)
	wsCfg.OriginHint = `add the page's origin (scheme://host:port) to websocket.allowed_origins in the configuration, or "*" to allow any`
	wsCfg.Poller = wsPoller(cfg)
	wsCfg.Logger = log
	ws, err := websocket.NewServer(wsCfg, func(c *websocket.Conn, r *http.Request) websocket.Receiver {
		// The headers proxies forward (Cookie, Authorization) go with the
		// client.
		return guard.Open(r, func(ticket guard.Ticket) websocket.Receiver {
			return h.Open(c, hub.ConnInfo{RemoteAddr: c.RemoteAddr(), Transport: hub.TransportWebSocket, Header: keepHeader(r.Header), Admission: ticket})
		})
	})
	if err != nil {
		return fmt.Errorf("websocket: %w", err)
	}
	b.s.ws = ws
	b.onFailure(func() { _ = ws.Close() })
	if !cfg.UniWebSocket.Enabled {
		return nil
	}
	// The unidirectional endpoint has options of its own
	// (uni_websocket.*), so a server of its own; its bidirectional
	// handler is never mounted.
	uniCfg := cfg.UniTransport()
	uniCfg.CheckOrigin, uniCfg.OriginHint, uniCfg.Poller, uniCfg.Logger = wsCfg.CheckOrigin, wsCfg.OriginHint, wsCfg.Poller, log
	uni, err := websocket.NewServer(uniCfg, func(*websocket.Conn, *http.Request) websocket.Receiver { return nil })
	if err != nil {
		return fmt.Errorf("uni_websocket: %w", err)
	}
	b.s.uniWS = uni
	b.onFailure(func() { _ = uni.Close() })
	return nil
}

// listenerTLS reads the certificates of the main and admin listeners and
// prepares uni_grpc with its own.
func (b *builder) listenerTLS() (err error) {
	s := b.s
	if s.tls, err = newMainTLS(s.cfg, s.log); err != nil {
		return err
	}
	if s.adminTLS, err = newFilesTLS("admin.tls", s.cfg.Admin.TLS, s.log); err != nil {
		return err
	}
	if s.internalTLS, err = internalListenerTLS(s.cfg, s.tls, s); err != nil {
		return err
	}
	s.uniGRPC, err = s.newUniGRPC()
	return err
}

func (b *builder) metrics() error {
	r := prometheus.NewRegistry()
	// The scheduler's latency histogram (go_sched_latencies_seconds) and
	// GC metrics, next to the defaults: under load they tell CPU starvation
	// from Herald's own queues.
	r.MustRegister(collectors.NewGoCollector(
		collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler, collectors.MetricsGC),
	), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	b.s.registry = r
	b.s.register(b.s.hub.Collectors()...)
	if b.pair != nil {
		b.s.register(b.pair.Collectors()...)
	}
	if b.s.proxy != nil {
		b.s.register(b.s.proxy.Collectors()...)
	}
	if ec, ok := b.eng.(interface{ Collectors() []prometheus.Collector }); ok {
		b.s.register(ec.Collectors()...)
	}
	return nil
}

// register registers Herald's own collectors and keeps them, so that a
// test can list every herald_ metric a node can export, also those that
// have no series yet (metricsdoc_test.go).
func (s *Server) register(cs ...prometheus.Collector) {
	s.registry.MustRegister(cs...)
	s.collectors = append(s.collectors, cs...)
}

// admission: the hub counts unauthenticated connections, the transports
// upgrade them; admission, in between, refuses before the upgrade.
func (b *builder) admission() error {
	adm, err := newAdmission(b.s.cfg.WebSocket, b.s.hub.NumPending, b.s.log)
	if err != nil {
		return err
	}
	b.s.adm = adm
	b.s.register(adm.Collectors()...)
	return nil
}

func (b *builder) grpcAPI() error { return b.s.newGRPCAPI(b.tp) }

func (b *builder) consumers() (err error) {
	if b.s.consumers, err = newConsumers(b.s.cfg, b.s.hub, b.s.log, b.tp); err != nil || b.s.consumers == nil {
		return err
	}
	b.s.register(b.s.consumers.Collectors()...)
	return nil
}
