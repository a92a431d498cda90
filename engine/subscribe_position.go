package engine

import (
	"context"
	"time"
)

// PositionSubscriber is implemented by engines that can subscribe and read
// a channel's stream position in one go. A subscriber that asks for its
// position (positioned or recoverable, not recovering) otherwise costs
// two steps one after the other: Subscribe, then History with Limit 0.
// On a networked engine each is a round trip, and a client's reply waits
// for both.
//
// Engines without it are subscribed and read as before; the hub asks
// through PositionSubscriberOf.
type PositionSubscriber interface {
	// SubscribePosition is Subscribe followed by History with Limit 0 and
	// MetaTTL metaTTL, in one: it returns once publications to channel
	// reach the handler, with the stream's position, which it creates
	// (offset 0, a new epoch) when the channel has no stream yet and
	// keeps for metaTTL, as History does. Every publication above the
	// returned position reaches the handler after it returns.
	SubscribePosition(ctx context.Context, channel string, metaTTL time.Duration) (StreamPosition, error)
}

// PositionSubscriberOf returns the PositionSubscriber of e (e itself, or
// the engine a wrapper wraps), or nil and false.
func PositionSubscriberOf(e Engine) (PositionSubscriber, bool) { return capOf[PositionSubscriber](e) }
