package server

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/config"
)

// Defaults of the admission limits (docs/configuration.md says why).
const (
	defaultMaxUnauthenticated = 10000
	defaultIPRateLimit        = 1000.0
)

// admissionLimits are the resolved websocket.max_unauthenticated,
// ip_rate_limit and ip_rate_burst: zero takes the default, -1 turns the
// limit off (maxPending or ipRate 0 here).
func admissionLimits(w config.WebSocketConfig) (maxPending int, ipRate float64, ipBurst int) {
	switch w.MaxUnauthenticated {
	case 0:
		maxPending = defaultMaxUnauthenticated
	case -1:
	default:
		maxPending = w.MaxUnauthenticated
	}
	switch w.IPRateLimit {
	case 0:
		ipRate = defaultIPRateLimit
	case -1:
		return maxPending, 0, 0
	default:
		ipRate = w.IPRateLimit
	}
	ipBurst = w.IPRateBurst
	if ipBurst == 0 {
		ipBurst = max(1, int(math.Ceil(2*ipRate)))
	}
	return maxPending, ipRate, ipBurst
}

// admission answers WebSocket upgrade requests the node will not take
// before the upgrade, so a refused attempt costs one short HTTP response
// and no connection state: 429 when the client's address opens
// connections faster than its rate, 503 when the node already holds
// maxPending connections that have not authenticated. Both close the TCP
// connection after answering.
type admission struct {
	next       http.Handler
	maxPending int            // 0: no bound
	pending    func() int     // the hub's connections that have not connected yet
	ips        *ipLimiter     // nil: no per-address rate
	trusted    []netip.Prefix // websocket.trusted_proxies
	log        *slog.Logger
	// upgrading counts requests between the check and the hub's NewClient
	// (which runs inside next.ServeHTTP), so that concurrent upgrades
	// cannot all pass the check before any is counted. Such a connection
	// briefly counts twice, which errs on the side of the bound.
	upgrading atomic.Int64

	refusedCap    prometheus.Counter
	refusedIPRate prometheus.Counter
	collectors    []prometheus.Collector
	// lastWarn* rate-limit the refusal warnings to one a minute each, so
	// a flood does not flood the log too (unix nanoseconds).
	lastWarnCap, lastWarnIP atomic.Int64
}

func newAdmission(next http.Handler, ws config.WebSocketConfig, pending func() int, log *slog.Logger) (*admission, error) {
	maxPending, ipRate, ipBurst := admissionLimits(ws)
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "websocket", Name: "refused_connections_total",
		Help: "WebSocket upgrades refused before the upgrade, by reason: cap (503, websocket.max_unauthenticated reached) or ip_rate (429, websocket.ip_rate_limit exceeded).",
	}, []string{"reason"})
	a := &admission{
		next: next, maxPending: maxPending, pending: pending, log: log,
		refusedCap:    refused.WithLabelValues("cap"),
		refusedIPRate: refused.WithLabelValues("ip_rate"),
		collectors:    []prometheus.Collector{refused},
	}
	if ipRate > 0 {
		a.ips = newIPLimiter(ipRate, ipBurst, defaultIPLimiterEntries)
	}
	trusted, err := parseTrustedProxies(ws.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("websocket.trusted_proxies: %w", err)
	}
	a.trusted = trusted
	return a, nil
}

func (a *admission) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.serve(a.next, w, r) }

// guard puts next, another endpoint that opens connections (the HTTP
// streams), behind the same limits and counts as the WebSocket upgrades.
// Such a handler runs as long as its connection: it calls
// releaseAdmission once the hub counts the connection.
func (a *admission) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.serve(next, w, r) })
}

// admitted is one request between the check and the hub's count of its
// connection; release takes it off admission.upgrading, once.
type admitted struct {
	once sync.Once
	a    *admission
}

func (t *admitted) release() { t.once.Do(func() { t.a.upgrading.Add(-1) }) }

type admittedKey struct{}

// releaseAdmission tells admission that the hub now counts the
// connection r opened, so that it stops counting it as upgrading.
func releaseAdmission(r *http.Request) {
	if t, ok := r.Context().Value(admittedKey{}).(*admitted); ok {
		t.release()
	}
}

func (a *admission) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	if a.ips != nil {
		// X-Forwarded-For is the client's to invent: it is read only
		// from a trusted proxy.
		if addr, ok := clientAddr(r, a.trusted); ok && !a.ips.allow(addr, now) {
			a.refusedIPRate.Inc()
			if shouldWarn(&a.lastWarnIP, now) {
				a.log.Warn("websocket connections refused (429): an address opens connections faster than websocket.ip_rate_limit (logged at most once a minute)",
					"address", addr.String(), "remote", r.RemoteAddr)
			}
			refuse(w, http.StatusTooManyRequests, "too many new connections from your address")
			return
		}
	}
	if a.maxPending <= 0 {
		next.ServeHTTP(w, r)
		return
	}
	t := &admitted{a: a}
	defer t.release()
	if n := a.pending() + int(a.upgrading.Add(1)); n > a.maxPending {
		a.refusedCap.Inc()
		if shouldWarn(&a.lastWarnCap, now) {
			a.log.Warn("websocket connections refused (503): too many connections have not authenticated (logged at most once a minute)",
				"unauthenticated", n-1, "limit", a.maxPending, "setting", "websocket.max_unauthenticated")
		}
		refuse(w, http.StatusServiceUnavailable, "too many unauthenticated connections on this node")
		return
	}
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), admittedKey{}, t)))
}

// refuse answers an upgrade request with status and a one-line body, and
// closes the TCP connection after it so a refused client holds no socket.
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
