package protocol

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// SplitFrame calls fn with each message of a frame built with
// AppendMessage, in order: the lines of a JSON frame, the length-prefixed
// messages of a Protobuf frame. It is what transports that write messages
// one by one (SSE events, unidirectional pushes) use to take a frame
// apart. msg aliases frame. It stops at fn's first error and returns it;
// a Protobuf frame cut inside a message is an error.
func SplitFrame(t Type, frame []byte, fn func(msg []byte) error) error {
	switch t {
	case TypeJSON:
		for len(frame) > 0 {
			msg := frame
			if i := bytes.IndexByte(frame, '\n'); i >= 0 {
				msg, frame = frame[:i], frame[i+1:]
			} else {
				frame = nil
			}
			if len(msg) == 0 {
				continue
			}
			if err := fn(msg); err != nil {
				return err
			}
		}
		return nil
	case TypeProtobuf:
		for i := 0; len(frame) > 0; i++ {
			size, n := protowire.ConsumeVarint(frame)
			if n < 0 {
				return fmt.Errorf("protocol: split frame: message %d: length prefix: %w", i, protowire.ParseError(n))
			}
			frame = frame[n:]
			if size > uint64(len(frame)) {
				return fmt.Errorf("protocol: split frame: message %d: length %d, %d bytes left: %w", i, size, len(frame), errShortFrame)
			}
			if err := fn(frame[:size]); err != nil {
				return err
			}
			frame = frame[size:]
		}
		return nil
	}
	return fmt.Errorf("protocol: split frame: unknown encoding %v", t)
}
