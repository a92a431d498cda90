package redis

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/wire"
)

// What travels through Redis. Publication bodies and ClientInfos are
// encoded by package wire. A stream entry holds the body in field "d"; its
// id carries the offset. A pub/sub message on a channel's pub/sub channel
// is one kind byte and then:
//
//	'h' offset ':' epoch ':' body   publication with history (built by the publish script)
//	'p' body                        publication without history
//	'j' ClientInfo                  join
//	'l' ClientInfo                  leave
//
// Control messages travel raw on the control channel.
const (
	msgHistoryPub = 'h'
	msgPub        = 'p'
	msgJoin       = 'j'
	msgLeave      = 'l'
)

var errTruncated = errors.New("truncated message")

// message is a decoded pub/sub message of a channel.
type message struct {
	kind   byte
	offset uint64
	epoch  string // shares the payload's memory
	pub    *engine.Publication
	info   *engine.ClientInfo
}

// parseMessage decodes a channel's pub/sub payload. It copies the payload
// once; everything returned shares that copy.
func parseMessage(payload string) (message, error) {
	if payload == "" {
		return message{}, errTruncated
	}
	m := message{kind: payload[0]}
	switch m.kind {
	case msgHistoryPub:
		rest := payload[1:]
		i := strings.IndexByte(rest, ':')
		if i < 0 {
			return m, errTruncated
		}
		off, err := strconv.ParseUint(rest[:i], 10, 64)
		if err != nil || off == 0 {
			return m, fmt.Errorf("bad offset %q", rest[:i])
		}
		rest = rest[i+1:]
		j := strings.IndexByte(rest, ':')
		if j <= 0 {
			return m, errTruncated
		}
		m.offset, m.epoch = off, rest[:j]
		pub, err := wire.DecodePublication([]byte(rest[j+1:]))
		if err != nil {
			return m, err
		}
		pub.Offset = off
		m.pub = pub
	case msgPub:
		pub, err := wire.DecodePublication([]byte(payload[1:]))
		if err != nil {
			return m, err
		}
		m.pub = pub
	case msgJoin, msgLeave:
		info, err := wire.DecodeClientInfo([]byte(payload[1:]))
		if err != nil {
			return m, err
		}
		m.info = info
	default:
		return m, fmt.Errorf("unknown message kind %q", m.kind)
	}
	return m, nil
}
