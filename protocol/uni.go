package protocol

import (
	"bytes"
	"fmt"
)

// Unidirectional transports carry bare pushes instead of replies: the
// connect result arrives as a connect push, publications as pushes without
// the reply around them, and pings as empty pushes.

// AppendPushOnly appends p encoded as a bare Push (not inside a Reply), as
// unidirectional transports send it.
func AppendPushOnly(t Type, dst []byte, p *Push) ([]byte, error) {
	if p == nil {
		return dst, errNilMessage
	}
	switch t {
	case TypeJSON:
		return appendPushJSON(dst, p), nil
	case TypeProtobuf:
		return appendVT(dst, p)
	}
	return dst, fmt.Errorf("protocol: encode push: unknown encoding %v", t)
}

// jsonPushPrefix is how AppendReply and AppendPush begin a JSON reply that
// holds only a push.
var jsonPushPrefix = []byte(`{"push":`)

// ReplyToPush appends to dst the bare push that stands for one encoded
// reply msg (one message, not a frame): the push itself, a connect push for
// a connect result, an empty push for a ping. A reply that has no push
// form (an error, a result of another command) is an error: a
// unidirectional client never sends the command it answers.
func ReplyToPush(t Type, dst []byte, msg []byte) ([]byte, error) {
	if t == TypeJSON && bytes.HasPrefix(msg, jsonPushPrefix) && len(msg) > len(jsonPushPrefix) && msg[len(msg)-1] == '}' {
		// The fast path for publications: the push is the reply's only
		// member, written first by our encoder.
		return append(dst, msg[len(jsonPushPrefix):len(msg)-1]...), nil
	}
	r := &Reply{}
	switch t {
	case TypeJSON:
		rs, err := DecodeReplies(t, msg)
		if err != nil {
			return dst, err
		}
		if len(rs) != 1 {
			return dst, fmt.Errorf("protocol: reply to push: %d messages, want 1", len(rs))
		}
		r = rs[0]
	case TypeProtobuf:
		if err := r.UnmarshalVT(msg); err != nil {
			return dst, fmt.Errorf("protocol: reply to push: %w", err)
		}
	default:
		return dst, fmt.Errorf("protocol: reply to push: unknown encoding %v", t)
	}
	switch {
	case r.Push != nil:
		return AppendPushOnly(t, dst, r.Push)
	case r.Connect != nil:
		return AppendPushOnly(t, dst, &Push{Connect: connectPush(r.Connect)})
	case r.Error != nil:
		return dst, fmt.Errorf("protocol: reply to push: error reply %d (%s) has no push form", r.Error.Code, r.Error.Message)
	case r.Id == 0 && isEmptyReply(r):
		return AppendPushOnly(t, dst, &Push{})
	}
	return dst, fmt.Errorf("protocol: reply to push: reply %d has no push form", r.Id)
}

// isEmptyReply reports the ping: a reply with nothing in it.
func isEmptyReply(r *Reply) bool {
	return r.Error == nil && r.Push == nil && r.Connect == nil && r.Subscribe == nil &&
		r.Unsubscribe == nil && r.Publish == nil && r.Presence == nil && r.PresenceStats == nil &&
		r.History == nil && r.Ping == nil && r.Rpc == nil && r.Refresh == nil && r.SubRefresh == nil
}

func connectPush(r *ConnectResult) *Connect {
	return &Connect{
		Client: r.Client, Version: r.Version, Data: r.Data, Subs: r.Subs,
		Expires: r.Expires, Ttl: r.Ttl, Ping: r.Ping, Pong: r.Pong,
		Session: r.Session, Node: r.Node, Time: r.Time,
	}
}
