package engine

import (
	"context"
	"time"
)

// PresenceJoiner is implemented by engines that can store a client's
// presence in a channel and publish its join in one step. A subscriber
// with both otherwise costs two steps one after the other, AddPresence
// and then PublishJoin; on a networked engine each is a round trip, and
// the connection's next command waits for both.
//
// Engines without it are called in those two steps; the hub asks
// through PresenceJoinerOf.
type PresenceJoiner interface {
	// AddPresenceJoin is AddPresence followed by PublishJoin, in one
	// step: the presence entry is stored no later than the join reaches
	// any node, as when the two are called one after the other.
	AddPresenceJoin(ctx context.Context, channel string, info *ClientInfo, ttl time.Duration) error
}

// PresenceJoinerOf returns the PresenceJoiner of e (e itself, or the
// engine a wrapper wraps), or nil and false.
func PresenceJoinerOf(e Engine) (PresenceJoiner, bool) { return capOf[PresenceJoiner](e) }
