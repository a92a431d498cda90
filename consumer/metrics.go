package consumer

import "github.com/prometheus/client_golang/prometheus"

// metrics are a Group's Prometheus metrics, labelled by consumer name.
type metrics struct {
	applied *prometheus.CounterVec
	failed  *prometheus.CounterVec
	// oversized counts the failed messages over max_message_size.
	oversized *prometheus.CounterVec
	retried   *prometheus.CounterVec
	lag       *prometheus.GaugeVec
	up        *prometheus.GaugeVec
}

func newMetrics() *metrics {
	label := []string{"consumer"}
	return &metrics{
		applied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_consumer_applied_total", Help: "Commands a consumer applied.",
		}, label),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_consumer_failed_total", Help: "Messages a consumer moved aside (dead-lettered): malformed, refused, or failing after every retry.",
		}, label),
		oversized: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_consumer_oversized_total", Help: "Messages a consumer moved aside unapplied because they were over its max_message_size (counted in herald_consumer_failed_total too).",
		}, label),
		retried: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_consumer_retried_total", Help: "Retries of commands that failed with an error that may pass.",
		}, label),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "herald_consumer_lag", Help: "Messages waiting to be applied, as the source last reported them (PostgreSQL: rows left in the outbox partitions this node read, counted up to 10000 each); 0 for aws_sqs, google_pub_sub and azure_service_bus, whose backlog their cloud's own metrics show.",
		}, label),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "herald_consumer_up", Help: "1 while the consumer reads its source, 0 while it cannot reach it or a part of it (an outbox partition) cannot make progress.",
		}, label),
	}
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.applied, m.failed, m.oversized, m.retried, m.lag, m.up}
}
