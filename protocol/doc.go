// Package protocol holds Herald's client protocol v2 types and codecs, wire
// compatible with Centrifugo clients. It does no I/O.
//
// The message types are generated from client.proto (see generate.go).
// Binary encoding uses the generated vtprotobuf methods; the JSON encoding is
// Centrifugo's, not canonical proto3 JSON: snake_case keys in field-number
// order, zero values omitted except a few always-written fields, 64-bit
// integers as numbers, and bytes fields carried as embedded raw JSON.
//
// Incoming frames are split into commands with DecodeCommands. Outgoing
// replies are encoded one at a time with AppendReply or AppendPush and joined
// into a frame with AppendMessage.
package protocol
