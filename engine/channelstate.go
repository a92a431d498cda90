package engine

import (
	"context"
	"time"
)

// Channel state event types: Centrifugo PRO's ChannelEvent.type values
// (Centrifugo v6.9.1 internal/proxyproto/proxy.proto, NotifyChannelState).
const (
	ChannelOccupied = "occupied"
	ChannelVacated  = "vacated"
)

// ChannelStateEvent is one change of a channel's occupancy in the whole
// cluster: its first subscriber on any node (occupied), or its last one
// gone from every node for the vacated delay (vacated).
type ChannelStateEvent struct {
	Channel string
	Type    string
	// TimeMs is when the engine decided the change, in Unix milliseconds.
	// It is strictly greater than the TimeMs of the channel's previous
	// event, so (Channel, TimeMs) names one event: a receiver that keeps
	// the last TimeMs per channel can drop an event delivered again.
	TimeMs int64
}

// ChannelStateOptions say how a node's occupancy records are kept.
type ChannelStateOptions struct {
	// VacatedDelay is how long a channel must stay without subscribers
	// on every node before it is vacated; a subscriber that comes within
	// it cancels the vacated event (and no occupied event is made).
	VacatedDelay time.Duration
	// NodeTTL is the lease of the calling node's records: a node that
	// has not renewed it (KeepChannelOccupancy) for this long is taken
	// as dead, and its channels are left as if its subscribers had gone.
	NodeTTL time.Duration
	// MaxQueue bounds the undelivered events of an engine that keeps
	// them in memory (memory: the whole queue; Redis: each partition's
	// stream keeps its share, MaxQueue over the partitions, rounded up):
	// an event made when the queue is full drops the oldest undelivered
	// one, as Centrifugo PRO's bounded queues do (its event hooks docs:
	// "the oldest undelivered events are dropped, while new events are
	// still accepted"). Zero or less: no bound. The PostgreSQL engine
	// keeps its events on disk and does not bound them. Events an engine
	// makes outside SetChannelOccupancy (vacated delays run out, leases
	// lapsed) take the bound the node last gave it.
	MaxQueue int
}

// ChannelStateDropCounter is a ChannelStates that bounds its queue
// (ChannelStateOptions.MaxQueue) and counts what the bound dropped.
type ChannelStateDropCounter interface {
	// ChannelStateEventsDropped is how many undelivered events this
	// node's calls dropped to keep the queue within its bound. An event
	// dropped while a delivery carries it is lost only if that delivery
	// fails, and counts then (on the delivering node).
	ChannelStateEventsDropped() uint64
}

// ChannelStates keeps, for the whole cluster, which nodes have
// subscribers in which channels, and turns the first node in and the
// last node out of a channel into channel state events. Each change is
// decided once, by the engine, whichever nodes race; the events wait in
// the engine until delivered, in order per channel, so that they survive
// the restart of any node.
//
// The memory engine keeps them for one process; the PostgreSQL engine in
// tables (a transactional outbox); the Redis engine in partitions of
// hashes and a stream each, changed by Lua scripts. See ChannelStatesOf.
type ChannelStates interface {
	// SetChannelOccupancy records that this node now has subscribers in
	// channel (occupied) or has none left. Calls for one channel must
	// come one after another, in the order of the node's changes.
	SetChannelOccupancy(ctx context.Context, channel string, occupied bool, opts ChannelStateOptions) error
	// KeepChannelOccupancy renews this node's lease for ttl. lost is true
	// when the lease had lapsed and the node's records were dropped: the
	// caller records its channels again.
	KeepChannelOccupancy(ctx context.Context, ttl time.Duration) (lost bool, err error)
	// ReleaseChannelOccupancy drops this node's records at once, as a
	// node that stops does: its channels that have no other node are
	// vacated after their delay.
	ReleaseChannelOccupancy(ctx context.Context) error
	// DeliverChannelStates first turns the changes that are due (vacated
	// delays passed, lapsed leases) into events, then hands the oldest
	// undelivered events, at most limit, to fn, and removes them once fn
	// returns nil. At most one caller in the cluster delivers at a time,
	// so events of one channel reach fn in order; a caller that finds
	// another delivering returns 0 at once. An event whose fn failed, or
	// whose deliverer died, is handed over again.
	DeliverChannelStates(ctx context.Context, limit int, fn func(context.Context, []ChannelStateEvent) error) (int, error)
}

// ChannelStatesOf returns the part of e that keeps channel occupancy,
// looking through wrappers, or false when e keeps none.
func ChannelStatesOf(e Engine) (ChannelStates, bool) { return capOf[ChannelStates](e) }
