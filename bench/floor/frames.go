package main

import (
	"bytes"
	"fmt"

	"github.com/gobwas/ws"

	"github.com/heraldhq/herald/protocol"
)

// formats are the client encodings, indexable by protocol.Type.
var formats = [...]protocol.Type{protocol.TypeJSON, protocol.TypeProtobuf}

// dataOp is the frame opcode of an encoding: text for JSON, binary for
// Protobuf, as Herald sends.
func dataOp(t protocol.Type) ws.OpCode {
	if t == protocol.TypeProtobuf {
		return ws.OpBinary
	}
	return ws.OpText
}

// appendFrame appends one final, unmasked server frame: the header and the
// payload in one buffer, so that it goes out in one write.
func appendFrame(dst []byte, op ws.OpCode, payload []byte) []byte {
	h := ws.Header{Fin: true, OpCode: op, Length: int64(len(payload))}
	buf := bytes.NewBuffer(dst)
	buf.Grow(ws.HeaderSize(h) + len(payload))
	// Writing to a bytes.Buffer cannot fail.
	_ = ws.WriteHeader(buf, h)
	buf.Write(payload)
	return buf.Bytes()
}

// pushFrame encodes a publication push as one complete frame of format t.
func pushFrame(t protocol.Type, channel string, data []byte) ([]byte, error) {
	msg, err := protocol.AppendPush(t, nil, &protocol.Push{Channel: channel, Pub: &protocol.Publication{Data: data}})
	if err != nil {
		return nil, fmt.Errorf("encode push for %s: %w", t, err)
	}
	return appendFrame(nil, dataOp(t), protocol.AppendMessage(t, nil, msg)), nil
}

// cannedIDs is how many command ids have their replies pre-encoded
// (herald-bench sends connect as id 1 and its subscribes as 2, 3, …).
const cannedIDs = 32

// replies are the pre-encoded replies, per format and command id, without
// message framing (protocol.AppendMessage adds it).
type replies struct {
	connect   [len(formats)][cannedIDs + 1][]byte
	subscribe [len(formats)][cannedIDs + 1][]byte
	// bare[t][n] is the whole frame answering a first frame of n messages
	// as herald-bench sends it: connect (id 1), then subscribes (ids 2…n).
	bare [len(formats)][cannedIDs + 1][]byte
}

// connectResult is what every client is told: no pings (Ping 0 also makes
// herald-bench answer any empty message with a pong, which never comes).
func connectResult() *protocol.ConnectResult {
	return &protocol.ConnectResult{Client: "floor", Version: "floor"}
}

func newReplies() (*replies, error) {
	r := &replies{}
	for _, t := range formats {
		for id := uint32(1); id <= cannedIDs; id++ {
			var err error
			if r.connect[t][id], err = encodeReply(t, connectReply(id)); err != nil {
				return nil, err
			}
			if r.subscribe[t][id], err = encodeReply(t, subscribeReply(id)); err != nil {
				return nil, err
			}
		}
		for n := 1; n <= cannedIDs; n++ {
			msgs := protocol.AppendMessage(t, nil, r.connect[t][1])
			for id := 2; id <= n; id++ {
				msgs = protocol.AppendMessage(t, msgs, r.subscribe[t][id])
			}
			r.bare[t][n] = appendFrame(nil, dataOp(t), msgs)
		}
	}
	return r, nil
}

func connectReply(id uint32) *protocol.Reply {
	return &protocol.Reply{Id: id, Connect: connectResult()}
}

func subscribeReply(id uint32) *protocol.Reply {
	return &protocol.Reply{Id: id, Subscribe: &protocol.SubscribeResult{}}
}

func encodeReply(t protocol.Type, r *protocol.Reply) ([]byte, error) {
	b, err := protocol.AppendReply(t, nil, r)
	if err != nil {
		return nil, fmt.Errorf("encode reply %d for %s: %w", r.Id, t, err)
	}
	return b, nil
}

// appendConnect appends the connect reply of id to frame (a message
// sequence), canned for the usual ids.
func (r *replies) appendConnect(t protocol.Type, frame []byte, id uint32) ([]byte, error) {
	if id >= 1 && id <= cannedIDs {
		return protocol.AppendMessage(t, frame, r.connect[t][id]), nil
	}
	msg, err := encodeReply(t, connectReply(id))
	return protocol.AppendMessage(t, frame, msg), err
}

// appendSubscribe is appendConnect for a subscribe reply.
func (r *replies) appendSubscribe(t protocol.Type, frame []byte, id uint32) ([]byte, error) {
	if id >= 1 && id <= cannedIDs {
		return protocol.AppendMessage(t, frame, r.subscribe[t][id]), nil
	}
	msg, err := encodeReply(t, subscribeReply(id))
	return protocol.AppendMessage(t, frame, msg), err
}

// appendError appends an error reply: the floor serves nothing but
// connect and subscribe.
func appendError(t protocol.Type, frame []byte, id uint32, code protocol.ErrorCode) ([]byte, error) {
	msg, err := encodeReply(t, &protocol.Reply{Id: id, Error: protocol.NewError(code)})
	if err != nil {
		return frame, fmt.Errorf("error reply %d: %w", code, err)
	}
	return protocol.AppendMessage(t, frame, msg), nil
}
