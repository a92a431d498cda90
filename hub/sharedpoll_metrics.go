package hub

import "github.com/prometheus/client_golang/prometheus"

// pollMetrics count what shared poll channels ask of the refresh backend,
// so that the one-request-per-key-per-interval promise can be checked on
// a running node.
type pollMetrics struct {
	requests *prometheus.CounterVec // by result: ok, error
	keys     prometheus.Counter
}

func newPollMetrics() pollMetrics {
	return pollMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "herald", Subsystem: "shared_poll", Name: "refresh_requests_total",
			Help: "Refresh requests this node's shared poll channels made, by result (ok, error).",
		}, []string{"result"}),
		keys: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "herald", Subsystem: "shared_poll", Name: "refresh_keys_total",
			Help: "Keys this node's shared poll channels asked their refresh backend for: at most one per tracked key per refresh_interval, however many connections track it.",
		}),
	}
}

func (m *sharedPolls) collectors() []prometheus.Collector {
	channels := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "herald", Subsystem: "shared_poll", Name: "channels",
		Help: "Shared poll channels with subscribers on this node (a poller each).",
	}, func() float64 {
		m.mu.Lock()
		defer m.mu.Unlock()
		return float64(len(m.channels))
	})
	return []prometheus.Collector{m.metrics.requests, m.metrics.keys, channels}
}
