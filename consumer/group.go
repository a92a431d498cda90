package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/internal/kinds"
	"github.com/heraldhq/herald/internal/optionerr"
)

// Consumer types, as Centrifugo names them.
const (
	TypePostgres    = "postgresql"
	TypeRedisStream = "redis_stream"
	TypeJetStream   = "nats_jetstream"
)

// Source is one consumer's queue or table.
type Source interface {
	// Run reads the source until ctx is done, applies each message with
	// env.Apply in order, and acknowledges it (deletes, XACKs, acks) only
	// when Apply returned nil or a *DeadLetter (after moving the message
	// aside). It returns nil once ctx is done, or an error when the
	// source failed; the Group then runs it again after a backoff.
	Run(ctx context.Context, env *Env) error
	// Close releases the source's connections once Run has returned.
	Close()
}

// Env is what a Group gives a running Source.
type Env struct {
	Name  string // the consumer's name
	Node  string // this node's unique name, for consumer-group membership
	Apply Applier
	// Reject counts and logs a message the source itself finds malformed
	// (say, without its payload field), to be moved aside like one Apply
	// refused.
	Reject func(err error) *DeadLetter
	Log    *slog.Logger
	// Lag records the messages waiting in one part of the source (an
	// outbox partition, a stream), as the source knows them; the metric
	// is their sum.
	Lag func(part string, n int64)
	// Up records that the source is reachable (it read or polled), Down
	// that it is not, with the error.
	Up   func()
	Down func(err error)
}

// Config is one consumer. It is also the file format's entry of
// consumers (package config decodes it from the yaml tags, which hold each
// key's default and doc line), so an option is declared here once.
type Config struct {
	Name string `yaml:"name" defaultdoc:"required" doc:"the consumer's name, unique: it labels the metrics and the '/readyz' entry"`
	// Type is one of kinds' types; the matching section below is used.
	Type  string           `yaml:"type" defaultdoc:"required" doc:"'postgresql' (an outbox table), 'redis_stream', 'nats_jetstream', 'kafka', 'aws_sqs', 'google_pub_sub' or 'azure_service_bus'; the section of that name configures it ([consumers.md](consumers.md))"`
	Retry `yaml:",inline"` // max_retries, retry_min_backoff, retry_max_backoff
	// MaxMessageSize bounds a message's data, as api.Config.MaxBodySize
	// bounds a server API request: a larger one is moved aside
	// unapplied. Zero means DefaultMaxMessageSize; -1, no bound.
	MaxMessageSize  int64                 `yaml:"max_message_size" default:"1048576" doc:"largest message in bytes (the command as the source holds it), as 'http_api.max_body_size' bounds a server API request: a larger one is not applied but moved aside (the dead-letter table, stream, subject or topic; where there is none, skipped) and counted in 'herald_consumer_oversized_total'. '-1': no bound"`
	Postgres        PostgresConfig        `yaml:"postgresql"`
	RedisStream     RedisStreamConfig     `yaml:"redis_stream"`
	JetStream       JetStreamConfig       `yaml:"nats_jetstream"`
	Kafka           KafkaConfig           `yaml:"kafka"`
	AwsSqs          AwsSqsConfig          `yaml:"aws_sqs"`
	GooglePubSub    GooglePubSubConfig    `yaml:"google_pub_sub"`
	AzureServiceBus AzureServiceBusConfig `yaml:"azure_service_bus"`
}

// Validate reports every problem of c, each an *optionerr.Error naming
// the Go field ("Postgres.DSN"), as NewSource and NewGroup would refuse
// it. Only the section of c.Type is checked.
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, &optionerr.Error{Field: "Name", Message: "required"})
	}
	errs = append(errs, c.Retry.validate())
	if c.MaxMessageSize < -1 {
		errs = append(errs, &optionerr.Error{Field: "MaxMessageSize", Message: fmt.Sprintf("%d: must be positive, 0 (the default, %d) or -1 (no bound)", c.MaxMessageSize, DefaultMaxMessageSize)})
	}
	errs = append(errs, kinds.Validate(kindTable(c), c.Type))
	return errors.Join(errs...)
}

// NewSource returns the source a Config describes, checked but not yet
// connected. The name is the Group's to check.
func NewSource(c Config) (Source, error) {
	return kinds.Open(kindTable(c), c.Type)
}

// Group runs consumers.
type Group struct {
	log     *slog.Logger
	node    string
	exec    Executor
	metrics *metrics
	members []*member
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

type member struct {
	cfg    Config
	source Source
	mu     sync.Mutex
	err    error // the last failure while the source is down; nil when up
	lags   map[string]int64
}

// NewGroup checks cfgs and returns their Group; Start runs it. node names
// this node in the sources' consumer groups and must be unique in the
// cluster and stable while it runs.
func NewGroup(cfgs []Config, exec Executor, node string, log *slog.Logger) (*Group, error) {
	if log == nil {
		log = slog.Default()
	}
	g := &Group{log: log, node: node, exec: exec, metrics: newMetrics()}
	names := map[string]bool{}
	var errs []error
	for i, c := range cfgs {
		if c.Name != "" && names[c.Name] {
			errs = append(errs, fmt.Errorf("consumers[%d].name: %q is used twice", i, c.Name))
			continue
		}
		names[c.Name] = true
		if err := c.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("consumers[%d] (%s): %w", i, c.Name, err))
			continue
		}
		s, err := NewSource(c)
		if err != nil {
			errs = append(errs, fmt.Errorf("consumers[%d] (%s): %w", i, c.Name, err))
			continue
		}
		g.members = append(g.members, &member{cfg: c, source: s, err: errors.New("starting")})
		g.metrics.applied.WithLabelValues(c.Name)
		g.metrics.failed.WithLabelValues(c.Name)
		g.metrics.oversized.WithLabelValues(c.Name)
		g.metrics.retried.WithLabelValues(c.Name)
		g.metrics.lag.WithLabelValues(c.Name)
		g.metrics.up.WithLabelValues(c.Name)
	}
	return g, errors.Join(errs...)
}

// Collectors are the Group's metrics, labelled by consumer.
func (g *Group) Collectors() []prometheus.Collector { return g.metrics.collectors() }

// Start runs every consumer until Stop.
func (g *Group) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	for _, m := range g.members {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.run(ctx, m)
		}()
	}
}

// run runs one source until ctx is done, again after each failure.
func (g *Group) run(ctx context.Context, m *member) {
	name := m.cfg.Name
	env := &Env{
		Name: name, Node: g.node, Log: g.log.With("consumer", name),
		Apply: applier(name, g.exec, m.cfg.Retry, m.cfg.MaxMessageSize, g.metrics, g.log),
		Lag: func(part string, n int64) {
			m.mu.Lock()
			if m.lags == nil {
				m.lags = map[string]int64{}
			}
			m.lags[part] = n
			var sum int64
			for _, l := range m.lags {
				sum += l
			}
			m.mu.Unlock()
			g.metrics.lag.WithLabelValues(name).Set(float64(sum))
		},
		Up: func() {
			m.mu.Lock()
			m.err = nil
			m.mu.Unlock()
			g.metrics.up.WithLabelValues(name).Set(1)
		},
	}
	env.Reject = func(err error) *DeadLetter {
		g.metrics.failed.WithLabelValues(name).Inc()
		env.Log.Error("consumer: message moved aside", "error", err)
		return &DeadLetter{Err: err}
	}
	env.Down = func(err error) {
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
		g.metrics.up.WithLabelValues(name).Set(0)
	}
	defer m.source.Close()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := m.source.Run(ctx, env)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("source stopped")
		}
		env.Down(err)
		env.Log.Warn("consumer: source failed, retrying", "error", err, "backoff", backoff)
		if sleep(ctx, backoff) != nil {
			return
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// Stop stops every consumer: each stops reading, abandons the command it
// is applying (unacknowledged: it is applied again later, by this node or
// another), acknowledges every message it applied, and closes its
// connections. ctx bounds the wait.
func (g *Group) Stop(ctx context.Context) error {
	if g.cancel == nil {
		return nil
	}
	g.cancel()
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("consumers: stop: %w", ctx.Err())
	}
}

// Health maps each consumer's name to "" while it reads its source, or to
// the error that keeps it from it.
func (g *Group) Health() map[string]string {
	h := make(map[string]string, len(g.members))
	for _, m := range g.members {
		m.mu.Lock()
		if m.err != nil {
			h[m.cfg.Name] = m.err.Error()
		} else {
			h[m.cfg.Name] = ""
		}
		m.mu.Unlock()
	}
	return h
}
