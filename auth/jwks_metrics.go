package auth

import "github.com/prometheus/client_golang/prometheus"

// jwksMetrics tell an operator whether the identity provider's key set is
// being fetched: a node that keeps verifying with cached keys while the
// provider is down looks healthy otherwise. The token label tells the
// connection token's set from the subscription token's.
type jwksMetrics struct {
	fetches     *prometheus.CounterVec
	up          prometheus.Gauge
	keys        prometheus.Gauge
	lastSuccess prometheus.Gauge
}

func newJWKSMetrics(name string) *jwksMetrics {
	labels := prometheus.Labels{"token": name}
	return &jwksMetrics{
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "herald", Subsystem: "jwks", Name: "fetches_total", ConstLabels: labels,
			Help: "Fetches of the JWKS key set by result (ok, error).",
		}, []string{"result"}),
		up: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "herald", Subsystem: "jwks", Name: "up", ConstLabels: labels,
			Help: "1 when the last fetch of the JWKS key set succeeded, 0 when it failed (the cached keys are still used).",
		}),
		keys: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "herald", Subsystem: "jwks", Name: "keys", ConstLabels: labels,
			Help: "Signature keys in the cached JWKS key set.",
		}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "herald", Subsystem: "jwks", Name: "last_success_timestamp_seconds", ConstLabels: labels,
			Help: "When the JWKS key set was last fetched successfully, in unix seconds.",
		}),
	}
}

func (m *jwksMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.fetches, m.up, m.keys, m.lastSuccess}
}
