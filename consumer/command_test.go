package consumer_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald/consumer"
)

// TestDecode: Centrifugo's consumer payloads: the method apart with the
// request as data, or the {"method","payload"} envelope whose payload is
// an object or a JSON string; anything else is malformed, naming why.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		method, data string
		want         consumer.Command
		bad          string
	}{
		{method: "publish", data: `{"channel":"a"}`, want: consumer.Command{Method: "publish", Payload: []byte(`{"channel":"a"}`)}},
		{data: `{"method":"broadcast","payload":{"channels":["a"]}}`, want: consumer.Command{Method: "broadcast", Payload: []byte(`{"channels":["a"]}`)}},
		{data: `{"method":"publish","payload":"{\"channel\":\"a\"}"}`, want: consumer.Command{Method: "publish", Payload: []byte(`{"channel":"a"}`)}},
		{data: `{"payload":{}}`, bad: "method is missing"},
		{data: `not json`, bad: "not a"},
		{data: `{"method":"publish","payload":"\x"}`, bad: "not a"},
	} {
		got, err := consumer.Decode(tc.method, []byte(tc.data))
		if tc.bad != "" {
			if !errors.Is(err, consumer.ErrMalformed) || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("Decode(%q, %q): %v, want malformed: %s", tc.method, tc.data, err, tc.bad)
			}
			continue
		}
		if err != nil || got.Method != tc.want.Method || string(got.Payload) != string(tc.want.Payload) {
			t.Errorf("Decode(%q, %q) = %q %s, %v; want %q %s", tc.method, tc.data, got.Method, got.Payload, err, tc.want.Method, tc.want.Payload)
		}
	}
}

// TestNewGroupNamesEveryProblem: a group is refused with every problem of
// its consumers, each naming the consumer and the Go field (package
// config names the key).
func TestNewGroupNamesEveryProblem(t *testing.T) {
	_, err := consumer.NewGroup([]consumer.Config{
		{Name: "a", Type: consumer.TypePostgres, Postgres: consumer.PostgresConfig{DSN: "postgres://x/y", OutboxTableName: "t; drop"}},
		{Name: "a", Type: consumer.TypeRedisStream},
		{Name: "b", Type: consumer.TypeRedisStream, RedisStream: consumer.RedisStreamConfig{Address: []string{"x:1"}, ConsumerGroup: "g"}},
		{Name: "c", Type: consumer.TypeJetStream, JetStream: consumer.JetStreamConfig{StreamName: "s", DurableConsumerName: "d", DeliverPolicy: "last"}},
		{Name: "d", Type: consumer.TypeKafka, Kafka: consumer.KafkaConfig{Brokers: []string{"k:9092"}}},
		{Name: "e", Type: "sqs"},
		{Type: consumer.TypeKafka},
	}, nil, "node", nil)
	for _, want := range []string{
		`consumers[0] (a): Postgres.OutboxTableName: "t; drop"`,
		`consumers[1].name: "a" is used twice`,
		"consumers[2] (b): RedisStream.Streams: at least one stream is required",
		`consumers[3] (c): JetStream.DeliverPolicy: "last"`,
		"consumers[4] (d): Kafka.Topics: at least one topic is required",
		"Kafka.ConsumerGroup: required",
		`consumers[5] (e): Type: "sqs"`,
		"consumers[6] (): Name: required",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewGroup: %v\nwant it to say %q", err, want)
		}
	}
}
