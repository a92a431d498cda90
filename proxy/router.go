package proxy

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/heraldhq/herald/hub"
	"github.com/prometheus/client_golang/prometheus"
)

// Config is what New takes: a node's proxies and which events use them. Event fields
// hold an endpoint's Name; empty means no proxy for that event.
type Config struct {
	Endpoints []Endpoint
	// Connect and Refresh proxy the client-wide events.
	Connect string
	Refresh string
	// Subscribe, Publish and SubRefresh map a channel namespace ("" for
	// the channels without namespace) to its endpoint.
	Subscribe  map[string]string
	Publish    map[string]string
	SubRefresh map[string]string
	// SubscribeStream maps a channel namespace to the grpc:// endpoint of
	// its subscribe-stream proxy (stream.go), which then decides its
	// subscriptions instead of Subscribe and feeds each one.
	SubscribeStream map[string]string
	// SubscribeStreamBidirectional lists the namespaces of SubscribeStream
	// whose streams are bidirectional: the client's publications to the
	// channel go to the stream.
	SubscribeStreamBidirectional map[string]bool
	// MapPublish and MapRemove map a namespace to the endpoint of its
	// clients' map publish and map remove commands.
	MapPublish map[string]string
	MapRemove  map[string]string
	// SharedPollRefresh maps a shared_poll namespace to the endpoint its
	// keys are polled from (sharedpoll.go).
	SharedPollRefresh map[string]string
	// ChannelState is the endpoint of channel state events (channelstate.go),
	// Centrifugo PRO's channel.proxy.state.
	ChannelState string
	// RPC proxies the methods without namespace; RPCNamespaces declares
	// the RPC namespaces (the part of a method before ':') with their
	// endpoint, "" for none. A method in an undeclared namespace is
	// answered 104 (method not found).
	RPC           string
	RPCNamespaces map[string]string
	// RPCNamespaceBoundary separates a method's namespace from its name
	// (Centrifugo's rpc.namespace_boundary); "" means
	// DefaultRPCNamespaceBoundary.
	RPCNamespaceBoundary string
	// MaxInFlight bounds the calls in flight on this node, across all
	// endpoints: DefaultMaxInFlight when 0, no bound when negative.
	MaxInFlight int
	// ChannelSyntax is the hub's (hub.ChannelConfig): how a channel's
	// namespace is read. The zero value is Centrifugo's default syntax.
	ChannelSyntax hub.ChannelSyntax
	Logger        *slog.Logger
	// TracerProvider, when set, traces every call (a client span under
	// the caller's, see trace.go) and sends its trace context to the
	// backend in the traceparent header. Nil means no tracing, at no cost.
	TracerProvider trace.TracerProvider
}

// Router makes the proxy calls of one node.
type Router struct {
	// transports are the connection pools: the shared one first, then
	// one per endpoint with its own TLS.
	transports []*http.Transport
	// grpcConns are the gRPC endpoints' connections.
	grpcConns []*grpc.ClientConn
	limit     limiter
	metrics   *metrics
	log       *slog.Logger
	tracer    trace.Tracer // nil: tracing off

	connect, refresh               *endpoint
	subscribe, publish, subRefresh map[string]*endpoint
	subscribeStream                map[string]*endpoint
	streamBidi                     map[string]bool
	mapPublish, mapRemove          map[string]*endpoint
	sharedPoll                     map[string]*endpoint
	channelState                   *endpoint
	rpc                            *endpoint
	rpcNamespaces                  map[string]*endpoint
	rpcBoundary                    string
	syntax                         hub.ChannelSyntax
}

// New checks cfg and builds a router.
func New(cfg Config) (*Router, error) {
	byName := make(map[string]*endpoint, len(cfg.Endpoints))
	r := &Router{metrics: newMetrics(), log: cfg.Logger, syntax: cfg.ChannelSyntax}
	if r.log == nil {
		r.log = slog.Default()
	}
	if cfg.TracerProvider != nil {
		r.tracer = cfg.TracerProvider.Tracer(tracerName)
	}
	switch {
	case cfg.MaxInFlight == 0:
		r.limit.max = DefaultMaxInFlight
	case cfg.MaxInFlight > 0:
		r.limit.max = int64(cfg.MaxInFlight)
	}
	for i, ep := range cfg.Endpoints {
		if err := ep.Validate(); err != nil {
			return nil, fmt.Errorf("proxy %d (%q): %w", i, ep.Name, err)
		}
		tc, err := ep.tlsConfig()
		if err != nil {
			return nil, fmt.Errorf("proxy %q: %w", ep.Name, err)
		}
		ep.TLS = tc
		if byName[ep.Name] != nil {
			return nil, fmt.Errorf("proxy %q: defined twice", ep.Name)
		}
		byName[ep.Name] = &endpoint{Endpoint: ep, forward: ep.forwardNames(), emulated: ep.emulatedNames(), r: r}
	}
	pick := func(what, name string) (*endpoint, error) {
		if name == "" {
			return nil, nil
		}
		e := byName[name]
		if e == nil {
			return nil, fmt.Errorf("%s: unknown proxy %q", what, name)
		}
		return e, nil
	}
	pickMap := func(what string, m map[string]string) (map[string]*endpoint, error) {
		out := make(map[string]*endpoint, len(m))
		for ns, name := range m {
			e, err := pick(fmt.Sprintf("%s for namespace %q", what, ns), name)
			if err != nil {
				return nil, err
			}
			if e != nil || what == "rpc" {
				out[ns] = e
			}
		}
		return out, nil
	}
	var err error
	if r.connect, err = pick("connect", cfg.Connect); err != nil {
		return nil, err
	}
	if r.refresh, err = pick("refresh", cfg.Refresh); err != nil {
		return nil, err
	}
	if r.rpc, err = pick("rpc", cfg.RPC); err != nil {
		return nil, err
	}
	if r.channelState, err = pick("channel state", cfg.ChannelState); err != nil {
		return nil, err
	}
	if r.subscribe, err = pickMap("subscribe", cfg.Subscribe); err != nil {
		return nil, err
	}
	if r.publish, err = pickMap("publish", cfg.Publish); err != nil {
		return nil, err
	}
	if r.subRefresh, err = pickMap("sub_refresh", cfg.SubRefresh); err != nil {
		return nil, err
	}
	if r.subscribeStream, err = pickMap("subscribe_stream", cfg.SubscribeStream); err != nil {
		return nil, err
	}
	r.streamBidi = make(map[string]bool, len(cfg.SubscribeStreamBidirectional))
	for ns, on := range cfg.SubscribeStreamBidirectional {
		if on && r.subscribeStream[ns] == nil {
			return nil, fmt.Errorf("subscribe_stream for namespace %q: bidirectional without a subscribe-stream proxy", ns)
		}
		r.streamBidi[ns] = on
	}
	for ns, e := range r.subscribeStream {
		if !e.isGRPC() {
			return nil, fmt.Errorf("subscribe_stream for namespace %q: proxy %q is not a grpc:// endpoint (streams are gRPC only)", ns, e.Name)
		}
		if r.subscribe[ns] != nil {
			return nil, fmt.Errorf("namespace %q has both a subscribe proxy and a subscribe-stream proxy: choose one", ns)
		}
	}
	if r.mapPublish, err = pickMap("map_publish", cfg.MapPublish); err != nil {
		return nil, err
	}
	if r.mapRemove, err = pickMap("map_remove", cfg.MapRemove); err != nil {
		return nil, err
	}
	if r.sharedPoll, err = pickMap("shared_poll_refresh", cfg.SharedPollRefresh); err != nil {
		return nil, err
	}
	if r.rpcNamespaces, err = pickMap("rpc", cfg.RPCNamespaces); err != nil {
		return nil, err
	}
	if r.rpcBoundary = cfg.RPCNamespaceBoundary; r.rpcBoundary == "" {
		r.rpcBoundary = DefaultRPCNamespaceBoundary
	}
	// One pool of keep-alive connections for all endpoints: a reconnect
	// storm reuses connections instead of opening one per call.
	shared := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	client := func(t *http.Transport) *http.Client {
		r.transports = append(r.transports, t)
		return &http.Client{
			Transport: t,
			// A proxy endpoint answers itself; following a redirect would
			// resend the client's cookies somewhere else.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	sharedClient := client(shared)
	for _, e := range byName {
		if e.isGRPC() {
			if e.grpc, err = newGRPCEndpoint(e.Endpoint); err != nil {
				r.Close()
				return nil, fmt.Errorf("proxy %q: %w", e.Name, err)
			}
			r.grpcConns = append(r.grpcConns, e.grpc.conn)
			continue
		}
		e.client = sharedClient
		if e.TLS != nil {
			// Connections made with one endpoint's client certificate or
			// roots must not serve another endpoint on the same host.
			t := shared.Clone()
			t.TLSClientConfig = e.TLS.Clone()
			e.client = client(t)
		}
	}
	return r, nil
}

// Collectors are the router's Prometheus metrics, for the server to
// register.
func (r *Router) Collectors() []prometheus.Collector { return r.metrics.collectors() }

// Close drops the idle connections to the HTTP backends and closes the
// connections to the gRPC ones.
func (r *Router) Close() {
	for _, t := range r.transports {
		t.CloseIdleConnections()
	}
	for _, c := range r.grpcConns {
		_ = c.Close()
	}
}

// Handlers are the router's handlers for the events that have a proxy;
// the others are nil. Where an event's proxy covers some namespaces only,
// the handler returns hub.ErrUseDefault for the rest, so that in a
// hub.Chain the next handlers, and then the hub's defaults, decide them.
func (r *Router) Handlers() hub.Handlers {
	var h hub.Handlers
	if r.connect != nil {
		h.OnConnecting = r.onConnecting
	}
	if r.refresh != nil {
		h.OnRefresh = r.onRefresh
	}
	if len(r.subscribe) > 0 || len(r.subscribeStream) > 0 {
		h.OnSubscribe = r.onSubscribe
	}
	if len(r.publish) > 0 {
		h.OnPublish = r.onPublish
	}
	if len(r.subRefresh) > 0 {
		h.OnSubRefresh = r.onSubRefresh
	}
	if len(r.mapPublish) > 0 || len(r.mapRemove) > 0 {
		h.OnMapPublish = r.onMapPublish
	}
	if r.rpc != nil || r.hasRPCNamespaceProxy() {
		h.OnRPC = r.onRPC
	}
	if len(r.sharedPoll) > 0 {
		h.OnSharedPollRefresh = r.onSharedPollRefresh
	}
	if r.channelState != nil {
		h.OnChannelState = r.onChannelState
	}
	return h
}

func (r *Router) hasRPCNamespaceProxy() bool {
	for _, e := range r.rpcNamespaces {
		if e != nil {
			return true
		}
	}
	return false
}
