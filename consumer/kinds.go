package consumer

import "github.com/heraldhq/herald/internal/kinds"

// kindTable lists every type of consumer, bound to c's sections: a new kind
// is one row.
func kindTable(c Config) []kinds.Kind[Source] {
	return []kinds.Kind[Source]{
		{Type: TypePostgres, Field: "Postgres", Validate: c.Postgres.Validate, Open: func() (Source, error) { return NewPostgresSource(c.Postgres) }},
		{Type: TypeRedisStream, Field: "RedisStream", Validate: c.RedisStream.Validate, Open: func() (Source, error) { return NewRedisStreamSource(c.RedisStream) }},
		{Type: TypeJetStream, Field: "JetStream", Validate: c.JetStream.Validate, Open: func() (Source, error) { return NewJetStreamSource(c.JetStream) }},
		{Type: TypeKafka, Field: "Kafka", Validate: c.Kafka.Validate, Open: func() (Source, error) { return NewKafkaSource(c.Kafka) }},
		{Type: TypeAwsSqs, Field: "AwsSqs", Validate: c.AwsSqs.Validate, Open: func() (Source, error) { return NewAwsSqsSource(c.AwsSqs) }},
		{Type: TypeGooglePubSub, Field: "GooglePubSub", Validate: c.GooglePubSub.Validate, Open: func() (Source, error) { return NewGooglePubSubSource(c.GooglePubSub) }},
		{Type: TypeAzureServiceBus, Field: "AzureServiceBus", Validate: c.AzureServiceBus.Validate, Open: func() (Source, error) { return NewAzureServiceBusSource(c.AzureServiceBus) }},
	}
}
