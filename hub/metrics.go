package hub

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are one hub's Prometheus collectors. Counters the hot paths touch
// are resolved once here, so counting costs an atomic add; the writers'
// counts are added up per writer first (delivery_tally.go).
type metrics struct {
	commands        map[string]prometheus.Counter
	commandDuration map[string]prometheus.Observer
	sent            map[string]prometheus.Counter // by push or reply type
	bytesIn         prometheus.Counter
	bytesOut        prometheus.Counter
	framesOut       prometheus.Counter
	writesDetached  prometheus.Counter
	errors          *prometheus.CounterVec
	disconnects     *prometheus.CounterVec
	queueBytes      *queueHistogram // delivery_tally.go
	dropped         prometheus.Counter
	shed            prometheus.Counter
	shedReplies     prometheus.Counter
	joinLeaveCapped prometheus.Counter
	publishDuration prometheus.Observer
	deliveryLag     prometheus.Observer
	accessDecisions *prometheus.CounterVec
	rateLimited     *prometheus.CounterVec
	collectors      []prometheus.Collector
}

var commandNames = []string{
	"connect", "subscribe", "unsubscribe", "publish", "presence", "presence_stats", "history",
	"ping", "rpc", "refresh", "sub_refresh", "send", "unknown",
}

var sentTypes = []string{"reply", "error", "pub", "join", "leave", "unsubscribe", "message", "ping"}

func newMetrics(h *Hub) *metrics {
	m := &metrics{
		commands:        make(map[string]prometheus.Counter),
		commandDuration: make(map[string]prometheus.Observer),
		sent:            make(map[string]prometheus.Counter),
	}
	commands := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "client", Name: "commands_total",
		Help: "Commands received from clients, by method.",
	}, []string{"method"})
	durations := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "herald", Subsystem: "client", Name: "command_duration_seconds",
		Help:    "Time to handle a client command, by method: from the start of its turn on the client's command goroutine to its reply (a command that runs out of client.command_timeout counts up to that).",
		Buckets: []float64{.00001, .00005, .0001, .0005, .001, .005, .01, .05, .1, .5, 1, 5},
	}, []string{"method"})
	for _, n := range commandNames {
		m.commands[n] = commands.WithLabelValues(n)
		m.commandDuration[n] = durations.WithLabelValues(n)
	}
	sent := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "client", Name: "messages_sent_total",
		Help: "Messages queued to clients, by type (reply, error, pub, join, leave, unsubscribe, message, ping).",
	}, []string{"type"})
	for _, t := range sentTypes {
		m.sent[t] = sent.WithLabelValues(t)
	}
	m.bytesIn = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "client", Name: "received_bytes_total",
		Help: "Bytes of frames received from clients.",
	})
	m.bytesOut = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "client", Name: "sent_bytes_total",
		Help: "Bytes of frames written to clients.",
	})
	m.framesOut = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "client", Name: "sent_frames_total",
		Help: "Frames written to clients (each may batch several messages).",
	})
	m.writesDetached = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "client", Name: "blocked_writes_total",
		Help: "Frames whose client's socket did not take them at once: the rest was written on a goroutine of the client's own, so that the node's shared writers never wait for one client.",
	})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "client", Name: "errors_total",
		Help: "Error replies sent to clients, by code.",
	}, []string{"code"})
	m.disconnects = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "client", Name: "disconnects_total",
		Help: "Connections closed, by disconnect code (3000: closed by the client or the network).",
	}, []string{"code"})
	m.queueBytes = newQueueHistogram()
	m.joinLeaveCapped = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "channel", Name: "join_leave_suppressed_total",
		Help: "Join and leave events not pushed (or not emitted) because the channel had more local subscribers than its namespace's join_leave_max_subscribers.",
	})
	m.dropped = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "client", Name: "dropped_publications_total",
		Help: "Publications dropped from slow clients' queues (namespaces with queue_policy drop_oldest).",
	})
	publish := prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "herald", Subsystem: "engine", Name: "publish_duration_seconds",
		Help:    "Time for the engine to accept a publication.",
		Buckets: []float64{.00001, .00005, .0001, .0005, .001, .002, .005, .01, .025, .05, .1, .5, 1},
	})
	m.publishDuration = publish
	lag := prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "herald", Subsystem: "engine", Name: "delivery_lag_seconds",
		Help:    "Time from the engine accepting a publication to this node fanning it out (millisecond resolution).",
		Buckets: []float64{.001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 5},
	})
	m.deliveryLag = lag
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "herald", Name: name, Help: help}, f)
	}
	m.shed = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "node", Name: "shed_publications_total",
		Help: "Publications refused with error 111 because this node's client write queues held more than client.node_queue_max_size bytes.",
	})
	m.shedReplies = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "node", Name: "shed_replies_total",
		Help: "History commands with a limit, recovering subscribes, map subscribe pages and connects with recovered server-side subscriptions refused with error 111 because this node's client write queues held more than client.node_queue_max_size bytes, or because their reply (which may be large) would take them past half of it.",
	})
	m.accessDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "access", Name: "decisions_total",
		Help: "Token revocations, token invalidations, blocks and unblocks made through this node, by kind (revoke, invalidate, block, unblock).",
	}, []string{"kind"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "rate_limit", Name: "over_limit_total",
		Help: "Client commands (and, for client_error, error replies) over the buckets of client.rate_limit, by layer, command (rpc.METHOD for a method with buckets of its own) and dry_run (true: counted, not refused).",
	}, []string{"layer", "command", "dry_run"})
	m.collectors = []prometheus.Collector{
		m.accessDecisions, m.rateLimited,
		gauge("access_records", "Token revocations, token invalidations and blocked users this node holds in memory.", func() float64 { return float64(h.access.Size()) }),
		commands, durations, sent, m.bytesIn, m.bytesOut, m.framesOut, m.writesDetached, m.errors, m.disconnects, m.queueBytes, m.dropped, m.shed, m.shedReplies, m.joinLeaveCapped, publish, lag,
		gauge("node_queued_bytes", "Bytes waiting in the write queues of every client of this node; past client.node_queue_max_size, publishing on this node is shed.", func() float64 { return float64(h.queuedTotal.Load()) }),
		gauge("client_connections", "Connected (authenticated) clients on this node.", func() float64 { return float64(h.NumClients()) }),
		gauge("client_unauthenticated_connections", "Upgraded connections on this node that have not connected (authenticated) yet: at most websocket.max_unauthenticated, each closed after client.stale_close_delay.", func() float64 { return float64(h.NumPending()) }),
		gauge("client_users", "Distinct users connected to this node.", func() float64 { return float64(h.NumUsers()) }),
		gauge("client_subscriptions", "Client subscriptions on this node.", func() float64 { return float64(h.NumSubscriptions()) }),
		gauge("channels", "Channels with subscribers on this node.", func() float64 { return float64(h.NumChannels()) }),
		gauge("client_write_coalesce_seconds", "The node's current write coalescing interval: 0 while every message is written at once; it grows while writes take a large share of the CPUs, up to client.write_coalesce (past half of it only while writes merge several messages).", func() float64 { return h.writeInterval().Seconds() }),
		gauge("cluster_nodes", "Live nodes of the cluster, this one included.", func() float64 { return float64(len(h.nodes.List())) }),
	}
	return m
}

// Collectors returns the hub's Prometheus collectors, for the server to
// register.
func (h *Hub) Collectors() []prometheus.Collector { return h.metrics.collectors }

func (m *metrics) command(name string, start time.Time) {
	m.commands[name].Inc()
	m.commandDuration[name].Observe(time.Since(start).Seconds())
}

func (m *metrics) errorReply(code uint32) {
	m.sent["error"].Inc()
	m.errors.WithLabelValues(strconv.FormatUint(uint64(code), 10)).Inc()
}

func (m *metrics) disconnect(code uint32) {
	m.disconnects.WithLabelValues(strconv.FormatUint(uint64(code), 10)).Inc()
}

// rateOverLimit counts a command over the buckets of a rate limit layer.
// The labels are bounded: commands and the configured rpc methods.
func (m *metrics) rateOverLimit(layer, command string, dryRun bool) {
	m.rateLimited.WithLabelValues(layer, command, dryRunLabel(dryRun)).Inc()
}
