package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// DecodeCommands splits an incoming frame into Commands.
//
// JSON frames hold one Command object per line; the frame is trimmed and
// empty lines are skipped. Each line must be valid JSON in valid UTF-8.
// bytes fields such as data keep the raw JSON the client sent, byte for
// byte, so they are safe to embed in JSON replies. Protobuf frames hold
// varint-length-prefixed Commands until the frame ends; the single byte 0x00
// is one empty Command. Protobuf bytes fields may hold anything: check them
// with ValidJSONPayload before they reach a JSON connection.
//
// An empty Command ({} or 0x00) is a pong. Unknown fields are skipped, as
// the reference server and Protobuf decoding do, so a command with only
// unknown fields, like {"id":8,"foo":{}}, decodes to a Command with no
// request set (see Command.Empty); the caller rejects it with
// DisconnectBadRequest. Any malformed input returns an error naming the
// problem and the command's index, and no commands: the caller disconnects
// with DisconnectBadRequest. Decoded commands do not alias frame.
func DecodeCommands(t Type, frame []byte) ([]*Command, error) {
	switch t {
	case TypeJSON:
		return decodeJSON(frame, "command", func(line []byte, c *Command) error {
			return decodeCommandJSON(&jsonReader{b: line}, c)
		})
	case TypeProtobuf:
		return decodeProtobuf(frame, "command", (*Command).UnmarshalVT)
	}
	return nil, fmt.Errorf("protocol: decode commands: unknown encoding %v", t)
}

// DecodeReplies splits a frame of Replies, as a client reads them; it
// follows the rules of DecodeCommands. An empty Reply is a ping.
func DecodeReplies(t Type, frame []byte) ([]*Reply, error) {
	switch t {
	case TypeJSON:
		return decodeJSON(frame, "reply", func(line []byte, r *Reply) error {
			if line[0] != '{' {
				return errNotObject
			}
			return json.Unmarshal(line, r)
		})
	case TypeProtobuf:
		return decodeProtobuf(frame, "reply", (*Reply).UnmarshalVT)
	}
	return nil, fmt.Errorf("protocol: decode replies: unknown encoding %v", t)
}

// Empty reports whether no request is set. With Id 0 that is a pong; with
// another Id it is a command the server cannot serve (3501 bad request).
func (x *Command) Empty() bool {
	return x.Connect == nil && x.Subscribe == nil && x.Unsubscribe == nil &&
		x.Publish == nil && x.Presence == nil && x.PresenceStats == nil &&
		x.History == nil && x.Ping == nil && x.Send == nil && x.Rpc == nil &&
		x.Refresh == nil && x.SubRefresh == nil
}

// decodeJSON splits a JSON frame into lines and decodes each with dec,
// after checking that it is valid JSON in valid UTF-8: json.Valid alone
// accepts invalid UTF-8 in strings, which could then reach other clients
// inside embedded payloads and break their text frames.
func decodeJSON[T any](frame []byte, name string, dec func([]byte, *T) error) ([]*T, error) {
	frame = bytes.TrimSpace(frame)
	if len(frame) == 0 {
		return nil, nil
	}
	out := make([]*T, 0, bytes.Count(frame, []byte{'\n'})+1)
	for i := 0; len(frame) > 0; {
		line := frame
		if j := bytes.IndexByte(frame, '\n'); j >= 0 {
			line, frame = frame[:j], frame[j+1:]
		} else {
			frame = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if !utf8.Valid(line) {
			return nil, fmt.Errorf("protocol: %s %d: invalid UTF-8", name, i)
		}
		if !json.Valid(line) {
			// Unmarshal again only to get encoding/json's description.
			var v any
			err := json.Unmarshal(line, &v)
			return nil, fmt.Errorf("protocol: %s %d: invalid JSON: %w", name, i, err)
		}
		m := new(T)
		if err := dec(line, m); err != nil {
			return nil, fmt.Errorf("protocol: %s %d: %w", name, i, err)
		}
		out = append(out, m)
		i++
	}
	return out, nil
}

// errShortFrame reports a length prefix or message cut off by the frame's end.
var errShortFrame = errors.New("frame ends inside the message")

func decodeProtobuf[T any](frame []byte, name string, unmarshal func(*T, []byte) error) ([]*T, error) {
	var out []*T
	for i := 0; len(frame) > 0; i++ {
		size, n := protowire.ConsumeVarint(frame)
		if n < 0 {
			return nil, fmt.Errorf("protocol: %s %d: length prefix: %w", name, i, protowire.ParseError(n))
		}
		frame = frame[n:]
		if size > uint64(len(frame)) {
			return nil, fmt.Errorf("protocol: %s %d: length %d, %d bytes left: %w", name, i, size, len(frame), errShortFrame)
		}
		m := new(T)
		if err := unmarshal(m, frame[:size]); err != nil {
			return nil, fmt.Errorf("protocol: %s %d: %w", name, i, err)
		}
		out = append(out, m)
		frame = frame[size:]
	}
	return out, nil
}
