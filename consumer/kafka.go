package consumer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/heraldhq/herald/internal/optionerr"
)

// TypeKafka is the Kafka consumer's type.
const TypeKafka = "kafka"

// KafkaConfig is a Kafka consumer, with Centrifugo's keys.
type KafkaConfig struct {
	Brokers        []string      `yaml:"brokers" doc:"seed brokers, e.g. 'kafka:9092'"`
	Topics         []string      `yaml:"topics" doc:"the topics to read; each partition is read in order by one node at a time"`
	ConsumerGroup  string        `yaml:"consumer_group" doc:"the consumer group the nodes share"`
	MaxPollRecords int           `yaml:"max_poll_records" default:"100" doc:"most records applied, then committed, at once"`
	FetchMaxWait   time.Duration `yaml:"fetch_max_wait" default:"500ms" doc:"longest a fetch waits for records"`
	MethodHeader   string        `yaml:"method_header" default:"centrifugo-method" doc:"the header holding the method; without it the record is the '{\"method\",\"payload\"}' envelope"`
	// DeadLetterTopic receives the records moved aside, with the header
	// herald-error and the original ones; empty: they are only logged
	// and counted.
	DeadLetterTopic string `yaml:"dead_letter_topic" doc:"records moved aside are produced here with the headers 'herald-error' and 'herald-source'; empty: they are only logged and counted"`
	// SessionTimeout and RebalanceTimeout are the group's (franz-go's
	// defaults when 0): a member that died is replaced after
	// SessionTimeout. Not in the file: tests shorten them.
	SessionTimeout   time.Duration `yaml:"-"`
	RebalanceTimeout time.Duration `yaml:"-"`
}

// Defaults of KafkaConfig.
const (
	DefaultMaxPollRecords = 100
	DefaultFetchMaxWait   = 500 * time.Millisecond
)

// KafkaSource reads Kafka topics in a consumer group: records of a
// partition are applied in order and their offsets committed after
// apply. Polling blocks rebalances until the polled records are applied
// and committed, so no record is applied after its partition moved to
// another node.
type KafkaSource struct {
	cfg KafkaConfig
}

// Validate reports every problem of c, each an *optionerr.Error naming
// the field. A zero field takes its default and is not a problem.
func (c KafkaConfig) Validate() error {
	var errs optionerr.List
	bad := errs.Add
	if len(c.Brokers) == 0 {
		bad("Brokers", "at least one broker is required")
	}
	if len(c.Topics) == 0 {
		bad("Topics", "at least one topic is required")
	}
	if c.ConsumerGroup == "" {
		bad("ConsumerGroup", "required")
	}
	if c.MaxPollRecords < 0 {
		bad("MaxPollRecords", "%d: must be positive", c.MaxPollRecords)
	}
	if c.FetchMaxWait < 0 {
		bad("FetchMaxWait", "%s: must be positive", c.FetchMaxWait)
	}
	return errors.Join(errs...)
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c KafkaConfig) WithDefaults() KafkaConfig {
	if c.MaxPollRecords == 0 {
		c.MaxPollRecords = DefaultMaxPollRecords
	}
	if c.FetchMaxWait == 0 {
		c.FetchMaxWait = DefaultFetchMaxWait
	}
	if c.MethodHeader == "" {
		c.MethodHeader = DefaultMethodHeader
	}
	return c
}

// NewKafkaSource checks cfg and applies its defaults.
func NewKafkaSource(cfg KafkaConfig) (*KafkaSource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &KafkaSource{cfg: cfg.WithDefaults()}, nil
}

// Close implements Source.
func (s *KafkaSource) Close() {}

// Run implements Source.
func (s *KafkaSource) Run(ctx context.Context, env *Env) error {
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.cfg.Brokers...),
		kgo.ConsumerGroup(s.cfg.ConsumerGroup),
		kgo.ConsumeTopics(s.cfg.Topics...),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.FetchMaxWait(s.cfg.FetchMaxWait),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ClientID("herald-" + env.Node),
		// The dead-letter topic is created on first use where the broker
		// allows it (auto.create.topics.enable).
		kgo.AllowAutoTopicCreation(),
	}
	if s.cfg.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(s.cfg.SessionTimeout), kgo.HeartbeatInterval(s.cfg.SessionTimeout/5))
	}
	if s.cfg.RebalanceTimeout > 0 {
		opts = append(opts, kgo.RebalanceTimeout(s.cfg.RebalanceTimeout))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	// Leaving the group hands the partitions over at once instead of after
	// the session timeout.
	defer cl.CloseAllowingRebalance()
	for ctx.Err() == nil {
		fetches := cl.PollRecords(ctx, s.cfg.MaxPollRecords)
		if ctx.Err() != nil {
			return nil
		}
		var fetchErr error
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) && fetchErr == nil {
				fetchErr = fmt.Errorf("kafka: fetch %s[%d]: %w", topic, p, err)
			}
		})
		if fetchErr != nil {
			env.Down(fetchErr)
			cl.AllowRebalance()
			if sleep(ctx, time.Second) != nil {
				return nil
			}
			continue
		}
		env.Up()
		applied, stopped, err := s.applyAll(ctx, env, cl, fetches.Records())
		end, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		cerr := error(nil)
		if len(applied) > 0 {
			cerr = cl.CommitRecords(end, applied...)
		}
		cancel()
		cl.AllowRebalance()
		if err != nil {
			return err
		}
		if cerr != nil {
			// The records are applied again by whoever reads the
			// partition next: the client must not go on past them.
			return fmt.Errorf("kafka: commit: %w", cerr)
		}
		if stopped {
			return nil
		}
		s.reportLag(env, cl, fetches)
	}
	return nil
}

// applyAll applies records in order (a partition's records are in offset
// order) and returns those applied or moved aside; stopped is true when
// ctx ended first.
func (s *KafkaSource) applyAll(ctx context.Context, env *Env, cl *kgo.Client, records []*kgo.Record) (applied []*kgo.Record, stopped bool, err error) {
	for _, r := range records {
		method := ""
		for _, h := range r.Headers {
			if h.Key == s.cfg.MethodHeader {
				method = string(h.Value)
			}
		}
		err := env.Apply(ctx, method, r.Value)
		var dl *DeadLetter
		if errors.As(err, &dl) {
			if s.cfg.DeadLetterTopic != "" {
				out := &kgo.Record{Topic: s.cfg.DeadLetterTopic, Key: r.Key, Value: r.Value,
					Headers: append(append([]kgo.RecordHeader(nil), r.Headers...),
						kgo.RecordHeader{Key: "herald-error", Value: []byte(dl.Err.Error())},
						kgo.RecordHeader{Key: "herald-source", Value: fmt.Appendf(nil, "%s/%d/%d", r.Topic, r.Partition, r.Offset)})}
				end, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				perr := cl.ProduceSync(end, out).FirstErr()
				cancel()
				if perr != nil {
					return applied, false, fmt.Errorf("kafka: move aside to %q: %w", s.cfg.DeadLetterTopic, perr)
				}
			}
		} else if err != nil {
			return applied, true, nil
		}
		applied = append(applied, r)
	}
	return applied, false, nil
}

// reportLag records, per partition polled, the records after the last
// one applied, as the broker's high watermark says.
func (s *KafkaSource) reportLag(env *Env, _ *kgo.Client, fetches kgo.Fetches) {
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		last := p.Records[len(p.Records)-1].Offset
		env.Lag(fmt.Sprintf("%s/%d", p.Topic, p.Partition), max(p.HighWatermark-last-1, 0))
	})
}
