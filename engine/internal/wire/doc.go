// Package wire is the binary encoding of publications and client infos
// that the Redis and NATS engines carry: in Redis pub/sub messages, stream
// entries and presence hashes, and in NATS messages. Both engines write
// the same bytes, so the format is defined once, here; how messages are
// framed around these bodies (kind bytes, NATS fragments, the Redis
// publish script's arguments) belongs to each engine.
//
// Messages are protobuf, written and read with protowire, so a reader
// skips fields it does not know and fields can be added later:
//
//	Publication = 1: data bytes, 2: info ClientInfo, 3: tag Tag (repeated), 4: time int64 (Unix ms),
//	              5: except_client string (written only when set),
//	              6: key string, 7: removed bool (a map change; written only when set)
//	ClientInfo  = 1: user string, 2: client string, 3: conn_info bytes, 4: chan_info bytes
//	Tag         = 1: key string, 2: value string
//
// A publication's offset is not part of it: it travels in the engine's
// framing (the Redis stream entry id, or the history message header).
// Stored publications outlive a release, so the numbers above never change
// meaning. A node of an older release skips except_client: it delivers
// such a publication to the excepted client too, and nothing else changes.
package wire
