package protocol

import "strconv"

// Type is the encoding of a connection, fixed for its lifetime.
type Type uint8

// Encodings. The zero value is JSON, the default when a client asks for
// nothing else.
const (
	// TypeJSON is newline-delimited JSON in text frames.
	TypeJSON Type = iota
	// TypeProtobuf is varint-length-prefixed Protobuf in binary frames
	// (subprotocol centrifuge-protobuf).
	TypeProtobuf
)

// String returns "json" or "protobuf".
func (t Type) String() string {
	switch t {
	case TypeJSON:
		return "json"
	case TypeProtobuf:
		return "protobuf"
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}
