package consumer

import (
	"fmt"
	"strings"

	"github.com/heraldhq/herald/internal/optionerr"
)

// kind is one type of consumer: the section of Config that configures
// it, how that section is checked, and the Source it makes. A new kind
// is one row of kinds.
type kind struct {
	typ      string
	field    string // the section's Go field, for optionerr names
	validate func() error
	source   func() (Source, error)
}

// kinds lists every type of consumer, bound to c's sections.
func kinds(c Config) []kind {
	return []kind{
		{TypePostgres, "Postgres", c.Postgres.Validate, func() (Source, error) { return NewPostgresSource(c.Postgres) }},
		{TypeRedisStream, "RedisStream", c.RedisStream.Validate, func() (Source, error) { return NewRedisStreamSource(c.RedisStream) }},
		{TypeJetStream, "JetStream", c.JetStream.Validate, func() (Source, error) { return NewJetStreamSource(c.JetStream) }},
		{TypeKafka, "Kafka", c.Kafka.Validate, func() (Source, error) { return NewKafkaSource(c.Kafka) }},
		{TypeAwsSqs, "AwsSqs", c.AwsSqs.Validate, func() (Source, error) { return NewAwsSqsSource(c.AwsSqs) }},
		{TypeGooglePubSub, "GooglePubSub", c.GooglePubSub.Validate, func() (Source, error) { return NewGooglePubSubSource(c.GooglePubSub) }},
		{TypeAzureServiceBus, "AzureServiceBus", c.AzureServiceBus.Validate, func() (Source, error) { return NewAzureServiceBusSource(c.AzureServiceBus) }},
	}
}

// kindOf returns the kind of c.Type.
func kindOf(c Config) (kind, bool) {
	for _, k := range kinds(c) {
		if k.typ == c.Type {
			return k, true
		}
	}
	return kind{}, false
}

func unknownType(t string) error {
	var names []string
	for _, k := range kinds(Config{}) {
		names = append(names, fmt.Sprintf("%q", k.typ))
	}
	return &optionerr.Error{Field: "Type", Message: fmt.Sprintf("%q: want %s or %s", t, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])}
}
