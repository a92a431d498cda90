// Package consumer runs Herald's asynchronous consumers: it reads server
// API commands (publish, broadcast and the other HTTP API methods) that a
// backend wrote to its own queue or table, in Centrifugo's consumer
// formats, and applies them through the same code as the HTTP API
// (api.Executor), so that a producer written for Centrifugo's consumers
// works unchanged.
//
// Sources: a PostgreSQL outbox table (PostgresSource), Redis Streams
// (RedisStreamSource), NATS JetStream (JetStreamSource), Kafka
// (KafkaSource), AWS SQS (AwsSqsSource), Google Cloud Pub/Sub
// (GooglePubSubSource) and Azure Service Bus (AzureServiceBusSource).
// Each implements Source and is one row of kinds; a Group runs the
// configured ones.
//
// # Guarantees
//
//   - At least once: a message is acknowledged (row deleted, XACK, JetStream
//     ack, Kafka offset commit) only after its command was applied. A node that dies between the
//     two leaves the message to be applied again by another node; a
//     publish or broadcast that carries an idempotency_key is then
//     delivered once, by the API's idempotency window.
//   - Order: within a partition (an outbox partition, a Redis stream, a
//     JetStream consumer with max_ack_pending 1, a Kafka partition) commands are applied one
//     after the other, in the order they were written.
//   - A command that fails is retried with exponential backoff when the
//     failure may pass (error 100 or 111: the engine failed or a limit was
//     hit), up to max_retries; a command that cannot succeed (not JSON,
//     unknown method, bad request, unknown channel) is not retried. Either
//     way it is then moved aside (dead-letter table, stream, subject or topic),
//     counted in herald_consumer_failed_total and logged, and the
//     partition goes on: a poison message never blocks it.
//   - Stop: a consumer stops reading, and acknowledges exactly the messages
//     it applied.
package consumer
