// Package stateoutput writes channel state events (occupied, vacated; see
// hub's channelstate.go) to a table or a queue the backend already reads,
// so that it gets them without running an HTTP or gRPC endpoint: a
// PostgreSQL table (PostgresOutput), NATS subjects (NATSOutput), a Redis
// stream (RedisStreamOutput) and a Kafka topic (KafkaOutput). Each is one
// row of kinds; a Set opens the configured ones and is one
// hub.Handlers.OnChannelState.
//
// # Guarantees
//
// The hub hands a batch over until a handler returns nil, so an output
// that fails returns its error and the batch comes again later, to every
// output; a node killed after an output took a batch and before the
// engine recorded it delivered also leaves it to be handed over again.
// Each output writes a batch in the order given (the order of each
// channel's changes), and names an event by (channel, type, time_ms),
// time_ms being strictly greater than the channel's previous event's:
//
//   - postgresql stores each event once (a UNIQUE constraint and
//     INSERT ... ON CONFLICT DO NOTHING): exactly once per transition.
//   - nats sends each event with the header Nats-Msg-Id, so a JetStream
//     stream on the subject drops a repeat within its duplicate window;
//     with JetStream set, each waits for the stream's acknowledgement.
//   - redis_stream adds an entry per delivery: at least once; a reader
//     drops a repeat by keeping the last time_ms per channel.
//   - kafka produces a record per delivery, keyed by channel, and waits
//     for every acknowledgement: at least once; the header
//     herald-event-id (channel:type:time_ms) lets a consumer drop a
//     repeat.
package stateoutput
