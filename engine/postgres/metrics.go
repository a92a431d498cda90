package postgres

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the engine's Prometheus collectors. Each engine has its own,
// unregistered; the server registers them through Collectors.
type metrics struct {
	batchSize     prometheus.Histogram
	payloadBytes  prometheus.Histogram
	txSeconds     prometheus.Histogram
	publishErrors prometheus.Counter
	spilled       prometheus.Counter
	listenerLag   prometheus.Histogram
	reconnects    prometheus.Counter
	gapRepairs    prometheus.Counter
	replayed      prometheus.Counter
	lost          prometheus.Counter
	malformed     prometheus.Counter
	queueUsage    prometheus.Gauge
	dispatchDepth prometheus.GaugeFunc
}

func newMetrics(nodeID string, depth func() float64) *metrics {
	labels := prometheus.Labels{"node": nodeID}
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: "herald", Subsystem: "postgres", Name: name, Help: help, ConstLabels: labels}
	}
	hist := func(name, help string, buckets []float64) prometheus.Histogram {
		o := opts(name, help)
		return prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: o.Namespace, Subsystem: o.Subsystem, Name: o.Name, Help: o.Help,
			ConstLabels: o.ConstLabels, Buckets: buckets,
		})
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts(opts(name, help)))
	}
	return &metrics{
		batchSize: hist("publish_batch_size", "Messages (publications, join/leave, control) per publishing transaction.",
			prometheus.ExponentialBuckets(1, 2, 12)),
		payloadBytes: hist("notify_payload_bytes", "Bytes per NOTIFY payload sent.",
			[]float64{256, 512, 1024, 2048, 4096, 6144, 7999}),
		txSeconds: hist("publish_tx_seconds", "Duration of publishing transactions.",
			prometheus.ExponentialBuckets(0.0001, 2, 14)),
		publishErrors: counter("publish_errors_total", "Publishing transactions that failed."),
		spilled:       counter("spilled_total", "Records too large for a notification, stored in the spill table."),
		listenerLag: hist("listener_lag_seconds", "Time from a publication being accepted to this node's listener reading it.",
			prometheus.ExponentialBuckets(0.0005, 2, 14)),
		reconnects: counter("listener_reconnects_total", "Times the listening connection was re-established."),
		gapRepairs: counter("gap_repairs_total", "Offset gaps found in live delivery and refilled from the history table."),
		replayed:   counter("replayed_total", "Publications delivered from the history table after a gap or a listener reconnect."),
		lost: counter("lost_total",
			"Publications of history channels that could not be delivered because the history table no longer held them (must stay 0)."),
		malformed:  counter("malformed_notifications_total", "Notifications on the engine's channels that could not be decoded."),
		queueUsage: prometheus.NewGauge(prometheus.GaugeOpts(opts("notification_queue_usage", "pg_notification_queue_usage(): the share of PostgreSQL's notification queue in use."))),
		dispatchDepth: prometheus.NewGaugeFunc(prometheus.GaugeOpts(opts("dispatch_queue_depth",
			"Notifications read by the listener and not yet handed on for delivery.")), depth),
	}
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.batchSize, m.payloadBytes, m.txSeconds, m.publishErrors, m.spilled,
		m.listenerLag, m.reconnects, m.gapRepairs, m.replayed, m.lost, m.malformed,
		m.queueUsage, m.dispatchDepth,
	}
}

// GapRepaired, Replayed and Lost make metrics the shards' sequence.Metrics.
func (m *metrics) GapRepaired()   { m.gapRepairs.Inc() }
func (m *metrics) Replayed(n int) { m.replayed.Add(float64(n)) }
func (m *metrics) Lost(n uint64)  { m.lost.Add(float64(n)) }
