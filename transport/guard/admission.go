package guard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/internal/keyedlimit"
)

// Admission answers the requests that would open connections the node
// will not take before anything is opened, so a refused attempt costs one
// short HTTP response and no connection state: 503 while the node drains
// or when it already holds MaxUnauthenticated connections that have not
// authenticated, 429 when the client's address opens connections faster
// than its Rate or already holds its share of the unauthenticated ones.
// Every refusal closes the TCP connection after answering.
//
// Put Handler in front of every endpoint that opens connections (the
// WebSocket upgrade, the HTTP streams). The transport opens each connection
// through Open, which gives the hub the connection's ticket (TakeTicket)
// to release once it has authenticated, and tells the Admission as soon as
// the hub counts the connection (Opened).
type Admission struct {
	lim     limits
	pending func() int
	ips     *keyedlimit.Limiter[netip.Addr] // nil: no per-address rate
	addrs   *addrCounts                     // nil: no per-address share
	trusted []netip.Prefix
	names   Names
	log     *slog.Logger
	// upgrading counts requests between the check and the hub's count of
	// their connection (Opened), so that concurrent upgrades cannot all
	// pass the check before any is counted. Such a connection briefly
	// counts twice, which errs on the side of the bound.
	upgrading atomic.Int64
	draining  atomic.Bool

	refusedCap, refusedAddress, refusedIPRate prometheus.Counter
	collectors                                []prometheus.Collector
	// lastWarn* rate-limit the refusal warnings to one a minute each, so
	// a flood does not flood the log too (unix nanoseconds).
	lastWarnCap, lastWarnAddress, lastWarnIP atomic.Int64
}

// New returns an Admission with cfg's limits.
func New(cfg Config) (*Admission, error) {
	lim, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	if lim.maxPending > 0 && cfg.Pending == nil {
		return nil, errors.New("Pending is required to bound MaxUnauthenticated (set it to the hub's NumPending, or MaxUnauthenticated to -1)")
	}
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "websocket", Name: "refused_connections_total",
		Help: "New connections (WebSocket upgrades and HTTP streams) refused before they open, by reason: cap (503, websocket.max_unauthenticated reached on the node), address_cap (429, one address holds websocket.max_unauthenticated_per_address, by default a tenth of websocket.max_unauthenticated) or ip_rate (429, websocket.ip_rate_limit exceeded).",
	}, []string{"reason"})
	a := &Admission{
		lim: lim, pending: cfg.Pending, trusted: lim.trusted,
		names: cfg.Names.withDefaults(), log: cfg.Logger,
		refusedCap:     refused.WithLabelValues("cap"),
		refusedAddress: refused.WithLabelValues("address_cap"),
		refusedIPRate:  refused.WithLabelValues("ip_rate"),
		collectors:     []prometheus.Collector{refused},
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	if lim.rate > 0 {
		a.ips = keyedlimit.New[netip.Addr](lim.rate, lim.burst, defaultIPLimiterEntries)
	}
	if lim.maxPerAddress > 0 {
		a.addrs = newAddrCounts(lim.maxPerAddress)
	}
	return a, nil
}

// Collectors are the Admission's metrics, for a Prometheus registry.
func (a *Admission) Collectors() []prometheus.Collector { return a.collectors }

// Drain makes Handler refuse every new connection from now on (503 with
// Retry-After), so that clients go to another node while this one closes
// its own.
func (a *Admission) Drain() { a.draining.Store(true) }

// Draining reports whether Drain was called.
func (a *Admission) Draining() bool { return a.draining.Load() }

// Handler puts next, an endpoint that opens connections, behind the
// Admission. A CORS preflight (OPTIONS) opens none and goes straight
// through. The handler opens its connection through Open, which tells the
// Admission once the hub counts the connection, not when the handler
// returns: a connection outlives its handler (an HTTP stream), or its
// client may open the next one before the handler returns (a WebSocket's
// 101 goes out first).
func (a *Admission) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		a.serve(next, w, r)
	})
}

// admitted is one request between the check and the hub's count of its
// connection.
type admitted struct {
	a    *Admission
	once sync.Once
	// addr is the address's count (nil: none kept), until handed to the
	// hub by TakeTicket; the Admission releases it if the request ends
	// without.
	addr *addrCount
}

// opened takes the request off Admission.upgrading, once.
func (t *admitted) opened() { t.once.Do(func() { t.a.upgrading.Add(-1) }) }

type admittedKey struct{}

// Opened tells the Admission that admitted r that the hub now counts the
// connection r opened (after hub.Open), so that it stops counting it
// itself. Without an Admission it does nothing.
func Opened(r *http.Request) {
	if t, ok := r.Context().Value(admittedKey{}).(*admitted); ok {
		t.opened()
	}
}

// Open runs open, which hands the connection r opened to the hub with
// ticket as hub.ConnInfo.Admission, and then tells the Admission that the
// hub counts it (Opened). Every transport opens its connections through it:
// an upgrade answered before the hub counts its connection (a WebSocket's
// 101) lets the client open its next connection at once, and the Admission
// must not still count the first one itself when that arrives, or a node
// below its cap refuses it.
func Open[R any](r *http.Request, open func(ticket Ticket) R) R {
	opened := open(TakeTicket(r))
	Opened(r)
	return opened
}

// TakeTicket hands the hub the place r's connection takes in its address's
// count of unauthenticated connections: set it as hub.ConnInfo.Admission,
// and the hub releases it when the connection authenticates or closes.
// It is nil when r was not admitted by an Admission that keeps such
// counts. Called more than once for r, it returns nil after the first.
func TakeTicket(r *http.Request) Ticket {
	t, ok := r.Context().Value(admittedKey{}).(*admitted)
	if !ok || t.addr == nil {
		return nil
	}
	e := t.addr
	t.addr = nil
	return e
}

func (a *Admission) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	if a.draining.Load() {
		refuse(w, http.StatusServiceUnavailable, "node is shutting down: connect to another node")
		return
	}
	now := time.Now()
	t := &admitted{a: a}
	if a.ips != nil || a.addrs != nil {
		// X-Forwarded-For is the client's to invent: it is read only
		// from a trusted proxy.
		addr, ok := ClientAddr(r, a.trusted)
		if ok && a.ips != nil && !a.ips.Allow(ipKey(addr), now) {
			a.refusedIPRate.Inc()
			if shouldWarn(&a.lastWarnIP, now) {
				a.log.Warn("connections refused (429): an address opens connections faster than "+a.names.Rate+" (logged at most once a minute)",
					"address", addr.String(), "remote", r.RemoteAddr, "setting", a.names.Rate)
			}
			refuse(w, http.StatusTooManyRequests, "too many new connections from your address")
			return
		}
		if ok && a.addrs != nil {
			e, taken := a.addrs.take(addr)
			if !taken {
				a.refusedAddress.Inc()
				if shouldWarn(&a.lastWarnAddress, now) {
					a.log.Warn("connections refused (429): an address holds its share of the connections that have not authenticated (logged at most once a minute)",
						"address", addr.String(), "remote", r.RemoteAddr, "limit", a.lim.maxPerAddress, "setting", a.names.MaxUnauthenticatedPerAddress)
				}
				refuse(w, http.StatusTooManyRequests, "too many unauthenticated connections from your address")
				return
			}
			t.addr = e
		}
	}
	// Whatever the hub did not take is given back when the request ends.
	defer func() {
		if t.addr != nil {
			t.addr.Release()
		}
	}()
	if a.lim.maxPending <= 0 {
		if t.addr == nil {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), admittedKey{}, t)))
		return
	}
	defer t.opened()
	if n := a.pending() + int(a.upgrading.Add(1)); n > a.lim.maxPending {
		a.refusedCap.Inc()
		if shouldWarn(&a.lastWarnCap, now) {
			a.log.Warn("connections refused (503): too many connections have not authenticated (logged at most once a minute)",
				"unauthenticated", n-1, "limit", a.lim.maxPending, "setting", a.names.MaxUnauthenticated)
		}
		refuse(w, http.StatusServiceUnavailable, "too many unauthenticated connections on this node")
		return
	}
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), admittedKey{}, t)))
}

// refuse answers a request with status and a one-line body, and closes the
// TCP connection after it so a refused client holds no socket.
func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", "1")
	http.Error(w, msg, status)
}

// shouldWarn reports whether a minute has passed since the last warning
// *last recorded, and records now if so.
func shouldWarn(last *atomic.Int64, now time.Time) bool {
	prev := last.Load()
	if prev != 0 && now.UnixNano()-prev < int64(time.Minute) {
		return false
	}
	return last.CompareAndSwap(prev, now.UnixNano())
}

// ClientAddr is the address the admission counts r against: the client
// behind a trusted proxy, or the peer's address, and for IPv6 its /64
// (as the admission's own limits count it). Other per-address limits
// (such as the emulation endpoint's) use it so that every limit sees the
// same client, and one host cannot pass them by using another address of
// its /64 for each request.
func (a *Admission) ClientAddr(r *http.Request) string { return ClientKey(r, a.trusted) }
