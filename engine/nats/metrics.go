package nats

import "github.com/prometheus/client_golang/prometheus"

// Collectors returns the engine's Prometheus collectors, unregistered, for
// the server to register. They read the same totals as Stats.
func (e *Engine) Collectors() []prometheus.Collector {
	labels := prometheus.Labels{"node": e.opts.NodeID}
	counter := func(name, help string, v func() uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "herald", Subsystem: "nats", Name: name, Help: help, ConstLabels: labels,
		}, func() float64 { return float64(v()) })
	}
	return []prometheus.Collector{
		counter("disconnects_total", "Times the connection to NATS was lost.", e.stats.disconnects.Load),
		counter("reconnects_total", "Times the connection to NATS was re-established.", e.stats.reconnects.Load),
		counter("dropped_total", "Messages lost on this node: slow-consumer drops and large messages missing fragments.", e.stats.dropped.Load),
		counter("malformed_messages_total", "Messages on the engine's subjects that could not be decoded.", e.stats.malformed.Load),
	}
}
