package stateoutput

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/heraldhq/herald/internal/optionerr"
)

// KafkaConfig is the kafka section: a topic that gets one record per
// event, keyed by channel.
type KafkaConfig struct {
	Brokers []string `yaml:"brokers" defaultdoc:"required" doc:"seed brokers, e.g. 'kafka:9092'"`
	Topic   string   `yaml:"topic" default:"herald.channel_state" doc:"the topic each event is produced to: key the channel (a channel's events stay in one partition, in order), value JSON '{\"channel\", \"type\", \"time_ms\"}', header 'herald-event-id' = 'channel:type:time_ms'"`
}

// Defaults of KafkaConfig.
const (
	DefaultKafkaTopic = "herald.channel_state"
	// kafkaDeliveryTimeout fails a record not acknowledged in time when
	// the caller set no deadline, so that a broker away fails the batch
	// rather than holding it for ever.
	kafkaDeliveryTimeout = 30 * time.Second
	// KafkaEventIDHeader names the header holding the event's id.
	KafkaEventIDHeader = "herald-event-id"
)

// Validate reports every problem of c, each an *optionerr.Error.
func (c KafkaConfig) Validate() error {
	var errs optionerr.List
	if len(c.Brokers) == 0 {
		errs.Add("Brokers", "required, e.g. [kafka:9092]")
	}
	for i, b := range c.Brokers {
		if b == "" {
			errs.Add(fmt.Sprintf("Brokers[%d]", i), "empty: want host:port")
		}
	}
	if err := checkKafkaTopic(c.Topic); err != nil {
		errs.Add("Topic", "%q: %v", c.Topic, err)
	}
	return errs.Err()
}

// checkKafkaTopic refuses what a broker refuses as a topic name: more
// than 249 characters, "." or "..", or a character outside [a-zA-Z0-9._-]
// (Apache Kafka's org.apache.kafka.common.internals.Topic.validate). ""
// takes the default.
func checkKafkaTopic(s string) error {
	switch {
	case s == "":
		return nil
	case len(s) > 249:
		return fmt.Errorf("%d characters, at most 249", len(s))
	case s == "." || s == "..":
		return fmt.Errorf("not a topic name")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("%q: want only ASCII letters, digits, '.', '_' and '-'", r)
		}
	}
	return nil
}

// topic is c.Topic or its default.
func (c KafkaConfig) topic() string {
	if c.Topic == "" {
		return DefaultKafkaTopic
	}
	return c.Topic
}

// KafkaOutput produces each event as a record to a topic, keyed by
// channel so that a channel's events land in one partition in the
// batch's order, and waits for every record's acknowledgement before a
// batch counts as delivered. The producer is idempotent (franz-go's
// default, with acks from all in-sync replicas), so its own retries of a
// request do not duplicate or reorder records; a batch the hub hands over
// again after a failure or a node killed is produced again, so at least
// once, and the header herald-event-id lets a consumer drop a repeat.
type KafkaOutput struct {
	client *kgo.Client
	topic  string
}

func newKafka(c KafkaConfig) (*KafkaOutput, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(c.Brokers...),
		kgo.ClientID("herald-channel-state"),
		kgo.DefaultProduceTopic(c.topic()),
		// Idempotence needs acks from all in-sync replicas; both are
		// franz-go's defaults, stated so that no later change of option
		// turns them off unnoticed.
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// Without it franz-go refuses to fail a record it may have sent
		// (a request written to a connection the broker then closed) and
		// waits for the broker's answer, however long the broker is away,
		// ignoring the context: the hub's delivery would hang instead of
		// failing the batch and retrying it. A record failed so and
		// produced again may be stored twice, which at least once allows
		// (herald-event-id); the client's own retries stay deduplicated.
		kgo.AllowIdempotentProduceCancellation(),
		kgo.RecordDeliveryTimeout(kafkaDeliveryTimeout),
		// As the Kafka consumer does: the broker decides whether a
		// missing topic is created (auto.create.topics.enable).
		kgo.AllowAutoTopicCreation(),
	)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	return &KafkaOutput{client: cl, topic: c.topic()}, nil
}

// NewKafkaOutput makes an output to c's topic; it connects on the first
// write.
func NewKafkaOutput(ctx context.Context, c KafkaConfig) (*KafkaOutput, error) {
	return openAs[*KafkaOutput](ctx, Config{Name: TypeKafka, Type: TypeKafka, Kafka: c})
}

// Write implements Output: it produces evs at once and returns when each
// record is acknowledged, or with the first record's error.
func (o *KafkaOutput) Write(ctx context.Context, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	rs := make([]*kgo.Record, len(evs))
	for i, e := range evs {
		data, err := marshalEvent(e)
		if err != nil {
			return err
		}
		rs[i] = &kgo.Record{Topic: o.topic, Key: []byte(e.Channel), Value: data,
			Headers: []kgo.RecordHeader{{Key: KafkaEventIDHeader, Value: []byte(eventID(e))}}}
	}
	if err := o.client.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("kafka: produce to %s: %w", o.topic, err)
	}
	return nil
}

// Close implements Output.
func (o *KafkaOutput) Close() { o.client.Close() }
