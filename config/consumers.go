package config

import (
	"fmt"
	"time"

	"github.com/heraldhq/herald/consumer"
)

// ConsumerConfig is one entry of consumers (consumer.Config), with
// Centrifugo v6's keys; max_retries, retry_min_backoff, retry_max_backoff
// and the dead-letter keys are Herald's.
type ConsumerConfig struct {
	Name            string                      `yaml:"name" defaultdoc:"required" doc:"the consumer's name, unique: it labels the metrics and the '/readyz' entry"`
	Enabled         bool                        `yaml:"enabled" doc:"run this consumer; a disabled one is still checked"`
	Type            string                      `yaml:"type" defaultdoc:"required" doc:"'postgresql' (an outbox table), 'redis_stream', 'nats_jetstream' or 'kafka'; the section of that name configures it ([consumers.md](consumers.md))"`
	MaxRetries      int                         `yaml:"max_retries" default:"5" doc:"retries of a command that failed with an error that may pass (100, 111) before the message is moved aside; '-1': none. A command that cannot succeed (malformed, unknown method, bad request) is moved aside at once"`
	RetryMinBackoff time.Duration               `yaml:"retry_min_backoff" default:"100ms" doc:"wait before the first retry; it doubles for each next one"`
	RetryMaxBackoff time.Duration               `yaml:"retry_max_backoff" default:"5s" doc:"longest wait between retries"`
	Postgres        PostgresConsumerConfig      `yaml:"postgresql"`
	RedisStream     RedisStreamConsumerConfig   `yaml:"redis_stream"`
	NatsJetStream   NatsJetStreamConsumerConfig `yaml:"nats_jetstream"`
	Kafka           KafkaConsumerConfig         `yaml:"kafka"`
}

// KafkaConsumerConfig is consumers[].kafka (consumer.KafkaConfig).
type KafkaConsumerConfig struct {
	Brokers         []string      `yaml:"brokers" doc:"seed brokers, e.g. 'kafka:9092'"`
	Topics          []string      `yaml:"topics" doc:"the topics to read; each partition is read in order by one node at a time"`
	ConsumerGroup   string        `yaml:"consumer_group" doc:"the consumer group the nodes share"`
	MaxPollRecords  int           `yaml:"max_poll_records" default:"100" doc:"most records applied, then committed, at once"`
	FetchMaxWait    time.Duration `yaml:"fetch_max_wait" default:"500ms" doc:"longest a fetch waits for records"`
	MethodHeader    string        `yaml:"method_header" default:"centrifugo-method" doc:"the header holding the method; without it the record is the '{\"method\",\"payload\"}' envelope"`
	DeadLetterTopic string        `yaml:"dead_letter_topic" doc:"records moved aside are produced here with the headers 'herald-error' and 'herald-source'; empty: they are only logged and counted"`
}

// PostgresConsumerConfig is consumers[].postgresql (consumer.PostgresConfig).
type PostgresConsumerConfig struct {
	DSN                          string        `yaml:"dsn" doc:"the database holding the outbox table, any database, e.g. 'postgres://user:pass@host:5432/app'"`
	OutboxTableName              string        `yaml:"outbox_table_name" doc:"the outbox table, optionally schema-qualified, with Centrifugo's columns: 'id' (bigserial), 'method', 'payload' (JSONB), 'partition'"`
	NumPartitions                int           `yaml:"num_partitions" default:"1" doc:"partitions 0 to N-1 are read, each in order by one node at a time (an advisory lock per partition)"`
	PartitionSelectLimit         int           `yaml:"partition_select_limit" default:"100" doc:"most rows applied, then deleted, in one transaction of a partition"`
	PartitionPollInterval        time.Duration `yaml:"partition_poll_interval" default:"300ms" doc:"how often an idle partition is polled"`
	PartitionNotificationChannel string        `yaml:"partition_notification_channel" doc:"a channel the producer NOTIFYs with the partition number after inserting; readers wake at once instead of at the next poll"`
	PartitionNotificationDSN     string        `yaml:"partition_notification_dsn" defaultdoc:"'dsn'" doc:"a direct session connection for LISTEN, when 'dsn' goes through a transaction-mode pooler"`
	UseTryLock                   bool          `yaml:"use_try_lock" doc:"skip a partition another node holds (pg_try_advisory_xact_lock) instead of waiting for its lock"`
	DeadLetterTableName          string        `yaml:"dead_letter_table_name" defaultdoc:"outbox table + '_dead_letter'" doc:"the table that receives the rows moved aside, with the error; created if missing"`
}

// RedisStreamConsumerConfig is consumers[].redis_stream
// (consumer.RedisStreamConfig).
type RedisStreamConsumerConfig struct {
	Address           []string      `yaml:"address" defaultdoc:"'127.0.0.1:6379'" doc:"one standalone Redis server, as a list of one as in Centrifugo: 'host:port' or 'redis://[user:password@]host:port[/db]'"`
	User              string        `yaml:"user" doc:"Redis ACL credentials: the user name"`
	Password          string        `yaml:"password" doc:"Redis ACL credentials: the password"`
	DB                int           `yaml:"db" doc:"database number"`
	Streams           []string      `yaml:"streams" doc:"the streams to read; each is read in order by one node at a time"`
	ConsumerGroup     string        `yaml:"consumer_group" doc:"the consumer group (created from the stream's start if missing)"`
	VisibilityTimeout time.Duration `yaml:"visibility_timeout" default:"30s" doc:"a node that stops renewing its stream lease (it died) loses the stream after this long; the next node claims what it left unacknowledged"`
	PayloadValue      string        `yaml:"payload_value" default:"payload" doc:"the field holding the request (or the '{\"method\",\"payload\"}' envelope)"`
	MethodValue       string        `yaml:"method_value" default:"method" doc:"the field holding the method; without it the payload is the envelope"`
	DeadLetterSuffix  string        `yaml:"dead_letter_suffix" default:":dead_letter" doc:"messages moved aside go to the stream named by the stream's name and this, with the fields 'herald_error' and 'herald_id'"`
}

// NatsJetStreamConsumerConfig is consumers[].nats_jetstream
// (consumer.JetStreamConfig).
type NatsJetStreamConsumerConfig struct {
	URL                 string        `yaml:"url" default:"nats://127.0.0.1:4222" doc:"the NATS server"`
	StreamName          string        `yaml:"stream_name" doc:"the stream to read"`
	Subjects            []string      `yaml:"subjects" doc:"subjects of the stream to read (all: empty)"`
	DurableConsumerName string        `yaml:"durable_consumer_name" doc:"the durable pull consumer, created or updated on start and shared by the nodes"`
	DeliverPolicy       string        `yaml:"deliver_policy" default:"new" doc:"'new': messages from the consumer's creation; 'all': the whole stream"`
	MaxAckPending       int           `yaml:"max_ack_pending" default:"100" doc:"messages delivered and not yet acknowledged, across the nodes; '1' applies them strictly in order across nodes"`
	MethodHeader        string        `yaml:"method_header" default:"centrifugo-method" doc:"the header holding the method; without it the message is the '{\"method\",\"payload\"}' envelope"`
	AckWait             time.Duration `yaml:"ack_wait" default:"30s" doc:"a message not acknowledged within this is delivered again (to another node when its node died)"`
	DeadLetterSubject   string        `yaml:"dead_letter_subject" doc:"messages moved aside are published here (a subject a stream captures) with the header 'Herald-Error'; empty: they are only terminated"`
}

// Consumers converts the enabled consumers for consumer.NewGroup.
func (c Config) Consumers() []consumer.Config {
	var out []consumer.Config
	for _, cc := range c.ConsumerList {
		if cc.Enabled {
			out = append(out, cc.consumer())
		}
	}
	return out
}

func (cc ConsumerConfig) consumer() consumer.Config {
	p, r, j := cc.Postgres, cc.RedisStream, cc.NatsJetStream
	return consumer.Config{
		Name: cc.Name, Type: cc.Type,
		Retry: consumer.Retry{MaxRetries: cc.MaxRetries, MinBackoff: cc.RetryMinBackoff, MaxBackoff: cc.RetryMaxBackoff},
		Postgres: consumer.PostgresConfig{
			DSN: p.DSN, OutboxTableName: p.OutboxTableName, NumPartitions: p.NumPartitions,
			PartitionSelectLimit: p.PartitionSelectLimit, PartitionPollInterval: p.PartitionPollInterval,
			PartitionNotificationChannel: p.PartitionNotificationChannel, PartitionNotificationDSN: p.PartitionNotificationDSN,
			UseTryLock: p.UseTryLock, DeadLetterTableName: p.DeadLetterTableName,
		},
		RedisStream: consumer.RedisStreamConfig{
			Address: first(r.Address), User: r.User, Password: r.Password, DB: r.DB, Streams: r.Streams,
			ConsumerGroup: r.ConsumerGroup, VisibilityTimeout: r.VisibilityTimeout, PayloadValue: r.PayloadValue,
			MethodValue: r.MethodValue, DeadLetterSuffix: r.DeadLetterSuffix,
		},
		Kafka: consumer.KafkaConfig{
			Brokers: cc.Kafka.Brokers, Topics: cc.Kafka.Topics, ConsumerGroup: cc.Kafka.ConsumerGroup,
			MaxPollRecords: cc.Kafka.MaxPollRecords, FetchMaxWait: cc.Kafka.FetchMaxWait,
			MethodHeader: cc.Kafka.MethodHeader, DeadLetterTopic: cc.Kafka.DeadLetterTopic,
		},
		JetStream: consumer.JetStreamConfig{
			URL: j.URL, StreamName: j.StreamName, Subjects: j.Subjects, DurableConsumerName: j.DurableConsumerName,
			DeliverPolicy: j.DeliverPolicy, MaxAckPending: j.MaxAckPending, MethodHeader: j.MethodHeader,
			AckWait: j.AckWait, DeadLetterSubject: j.DeadLetterSubject,
		},
	}
}

// first is a list's first item, or "".
func first(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return l[0]
}

// consumerProblems checks every consumer, enabled or not, as the consumer
// package would on start.
func (c Config) consumerProblems() Problems {
	var ps Problems
	names := map[string]bool{}
	for i, cc := range c.ConsumerList {
		key := fmt.Sprintf("consumers[%d]", i)
		if cc.Name == "" {
			ps = append(ps, Problem{Key: key + ".name", Message: "required"})
		} else if names[cc.Name] {
			ps = append(ps, Problem{Key: key + ".name", Message: fmt.Sprintf("%q is used twice", cc.Name)})
		}
		names[cc.Name] = true
		if cc.RetryMinBackoff < 0 || cc.RetryMaxBackoff < 0 {
			ps = append(ps, Problem{Key: key + ".retry_min_backoff", Message: "backoffs must not be negative"})
		}
		if len(cc.RedisStream.Address) > 1 {
			ps = append(ps, Problem{Key: key + ".redis_stream.address", Message: "one standalone server: Redis Cluster and sharding over several servers are not available for consumers"})
		}
		if _, err := consumer.NewSource(cc.consumer()); err != nil {
			ps = append(ps, Problem{Key: key, Message: err.Error()})
		}
	}
	return ps
}
