package postgres

import "github.com/prometheus/client_golang/prometheus"

// logicalMetrics are the collectors of the logical replication consumer.
type logicalMetrics struct {
	owner        prometheus.Gauge
	retained     prometheus.Gauge
	lag          prometheus.Gauge
	dropped      prometheus.Counter
	missing      prometheus.Counter
	transactions prometheus.Counter
	changes      prometheus.Counter
	skipped      prometheus.Counter
	errors       prometheus.Counter
}

func newLogicalMetrics(nodeID string) *logicalMetrics {
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: "herald", Subsystem: "postgres", Name: name, Help: help,
			ConstLabels: prometheus.Labels{"node": nodeID}}
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts(opts(name, help)))
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts(opts(name, help)))
	}
	return &logicalMetrics{
		owner: gauge("logical_slot_owner", "1 while this node consumes the logical replication slot (table streams)."),
		retained: gauge("logical_slot_retained_bytes",
			"WAL the logical replication slot holds back (pg_current_wal_lsn() - restart_lsn), read by the owning node."),
		lag: gauge("logical_slot_lag_bytes",
			"WAL written since the slot's confirmed position (pg_current_wal_lsn() - confirmed_flush_lsn), read by the owning node."),
		dropped: counter("logical_slot_dropped_total",
			"Times the logical replication slot was dropped for holding back more WAL than the limit (changes were lost)."),
		missing: counter("logical_slot_missing_total",
			"Times the slot that had published was found missing (dropped outside Herald, or lost in a failover) and created again (changes were lost)."),
		transactions: counter("logical_transactions_total", "Decoded transactions with changes of streamed tables, published."),
		changes:      counter("logical_changes_total", "Row changes decoded from the logical replication slot."),
		skipped: counter("logical_replayed_skipped_total",
			"Transactions the slot sent again after a restart or takeover that had already been published, and were skipped."),
		errors: counter("logical_consumer_errors_total", "Times the logical replication consumer stopped on an error and restarted."),
	}
}

func (m *logicalMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.owner, m.retained, m.lag, m.dropped, m.missing, m.transactions, m.changes, m.skipped, m.errors}
}
