package redis

import "github.com/prometheus/client_golang/prometheus"

// Collectors returns the engine's Prometheus collectors, unregistered, for
// the server to register. They read the same totals as Stats.
func (e *Engine) Collectors() []prometheus.Collector {
	labels := prometheus.Labels{"node": e.opts.NodeID}
	counter := func(name, help string, v func() uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "herald", Subsystem: "redis", Name: name, Help: help, ConstLabels: labels,
		}, func() float64 { return float64(v()) })
	}
	return []prometheus.Collector{
		counter("resubscribed_total", "Channel subscriptions re-established after a subscribing connection was lost, each followed by a replay.", e.stats.resubscribed.Load),
		counter("replaced_connections_total", "Subscribing connections replaced because they stopped answering pings.", e.stats.replaced.Load),
		counter("gap_repairs_total", "Offset gaps found in live delivery and refilled from history.", e.stats.gapRepairs.Load),
		counter("replayed_total", "Publications delivered from history after a gap or a reconnect.", e.stats.replayed.Load),
		counter("lost_total", "Publications of history channels that history no longer held when a gap was refilled (must stay 0).", e.stats.lost.Load),
		counter("malformed_messages_total", "Pub/sub messages on the engine's channels that could not be decoded.", e.stats.malformed.Load),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "herald", Subsystem: "redis", Name: "dispatch_queue_depth", ConstLabels: labels,
			Help: "Messages read from Redis and not yet handed on for delivery.",
		}, e.dispatchDepth),
	}
}

func (e *Engine) dispatchDepth() float64 {
	n := 0
	for _, s := range e.subscribers() {
		n += s.disp.Depth()
	}
	return float64(n)
}

// subscribers returns the subscribing connections, none before Start.
func (e *Engine) subscribers() []*subscriber {
	e.lifecycleMu.Lock()
	defer e.lifecycleMu.Unlock()
	return e.subs
}
