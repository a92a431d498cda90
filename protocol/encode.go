package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// errNilMessage is returned for a nil message: an empty Reply, the ping, is
// &Reply{}, so nil is always a caller's mistake.
var errNilMessage = errors.New("protocol: nil message")

// replyPushField is the field number of Reply.push.
const replyPushField protowire.Number = 4

// AppendReply appends one encoded Reply to dst: a JSON object, or the
// Protobuf message without a length prefix (AppendMessage adds framing).
//
// The JSON encoder embeds bytes fields as they are, without validating
// them, because it runs once per message on the hot path: payloads that did
// not come from a JSON client must be checked once with ValidJSONPayload
// before they reach a JSON connection. Raw newlines in payloads are dropped.
// With enough capacity in dst the JSON path does not allocate.
func AppendReply(t Type, dst []byte, r *Reply) ([]byte, error) {
	if r == nil {
		return dst, errNilMessage
	}
	switch t {
	case TypeJSON:
		return appendReplyJSON(dst, r), nil
	case TypeProtobuf:
		return appendVT(dst, r)
	}
	return dst, fmt.Errorf("protocol: encode reply: unknown encoding %v", t)
}

// AppendPush appends Reply{Push: p} encoded like AppendReply, without
// building the Reply; it encodes a publication once for all subscribers.
func AppendPush(t Type, dst []byte, p *Push) ([]byte, error) {
	if p == nil {
		return dst, errNilMessage
	}
	switch t {
	case TypeJSON:
		dst = append(dst, `{"push":`...)
		dst = appendPushJSON(dst, p)
		return append(dst, '}'), nil
	case TypeProtobuf:
		n := p.SizeVT()
		dst = protowire.AppendTag(dst, replyPushField, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(n))
		return appendSizedVT(dst, p, n)
	}
	return dst, fmt.Errorf("protocol: encode push: unknown encoding %v", t)
}

// AppendCommand appends one encoded Command, like AppendReply. Servers
// never send commands; Go clients and tests do.
func AppendCommand(t Type, dst []byte, c *Command) ([]byte, error) {
	if c == nil {
		return dst, errNilMessage
	}
	switch t {
	case TypeJSON:
		return appendCommandJSON(dst, c), nil
	case TypeProtobuf:
		return appendVT(dst, c)
	}
	return dst, fmt.Errorf("protocol: encode command: unknown encoding %v", t)
}

// vtMessage is the part of the generated vtprotobuf API used for encoding.
type vtMessage interface {
	SizeVT() int
	MarshalToSizedBufferVT([]byte) (int, error)
}

// appendVT marshals m straight into dst's spare capacity.
func appendVT(dst []byte, m vtMessage) ([]byte, error) {
	return appendSizedVT(dst, m, m.SizeVT())
}

// appendSizedVT is appendVT for a message whose size n is known.
func appendSizedVT(dst []byte, m vtMessage, n int) ([]byte, error) {
	dst = slices.Grow(dst, n)
	end := len(dst) + n
	if _, err := m.MarshalToSizedBufferVT(dst[len(dst):end]); err != nil {
		return dst, fmt.Errorf("protocol: marshal %T: %w", m, err)
	}
	return dst[:end], nil
}

// AppendMessage appends one encoded message to a frame: JSON messages are
// joined with '\n'; Protobuf messages are each prefixed with their length as
// a varint, so an empty message (the ping or pong) is the single byte 0x00.
func AppendMessage(t Type, frame, msg []byte) []byte {
	if t == TypeProtobuf {
		frame = protowire.AppendVarint(frame, uint64(len(msg)))
		return append(frame, msg...)
	}
	if len(frame) > 0 {
		frame = append(frame, '\n')
	}
	return append(frame, msg...)
}

// ValidJSONPayload reports whether b is one valid JSON value in valid UTF-8,
// i.e. whether it can be embedded in a JSON message as a bytes field.
// Payloads decoded from JSON commands always are.
func ValidJSONPayload(b []byte) bool {
	return utf8.Valid(b) && json.Valid(b)
}
