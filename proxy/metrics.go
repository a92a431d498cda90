package proxy

import "github.com/prometheus/client_golang/prometheus"

// Results of a call, the result label of herald_proxy_calls_total.
const (
	resultOK         = "ok"         // the backend answered with a result
	resultError      = "error"      // the backend answered with an error object
	resultDisconnect = "disconnect" // the backend answered with a disconnect object
	resultFailed     = "failed"     // no usable answer: down, timeout, status, bad JSON
	resultRejected   = "rejected"   // refused by the in-flight limit, never sent
)

// metrics are a router's Prometheus collectors; the server registers them.
type metrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
}

func newMetrics() *metrics {
	return &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "herald", Subsystem: "proxy", Name: "calls_total",
			Help: "Proxy calls to the backend by proxy, event and result: ok (a result), error (an error object), disconnect (a disconnect object), failed (no usable answer: down, timeout, status, bad JSON, unknown code) or rejected (over proxy_max_in_flight, never sent).",
		}, []string{"proxy", "event", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "herald", Subsystem: "proxy", Name: "call_duration_seconds",
			Help:    "Duration of proxy calls sent to the backend, failed ones included, by proxy and event.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"proxy", "event"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "herald", Subsystem: "proxy", Name: "in_flight",
			Help: "Proxy calls in flight on this node, across all proxies.",
		}),
	}
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.calls, m.duration, m.inFlight}
}
