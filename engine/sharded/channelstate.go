package sharded

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/engine"
)

// The channel occupancy of a sharded engine is its first shard's, as its
// Store is: the changes of a channel must be decided in one place, and
// one place also keeps a change of the shard list from orphaning a
// channel's records (which would never be vacated). Occupancy changes
// are rare next to publications, so one shard carries them.

var _ engine.ChannelStates = (*Engine)(nil)

func (e *Engine) channelStates() (engine.ChannelStates, error) {
	cs, ok := engine.ChannelStatesOf(e.shards[0])
	if !ok {
		return nil, fmt.Errorf("sharded engine: shard 0 (%T) keeps no channel occupancy", e.shards[0])
	}
	return cs, nil
}

// SetChannelOccupancy implements engine.ChannelStates on the first shard.
func (e *Engine) SetChannelOccupancy(ctx context.Context, channel string, occupied bool, opts engine.ChannelStateOptions) error {
	cs, err := e.channelStates()
	if err != nil {
		return err
	}
	return wrap(cs.SetChannelOccupancy(ctx, channel, occupied, opts), 0)
}

// KeepChannelOccupancy implements engine.ChannelStates on the first shard.
func (e *Engine) KeepChannelOccupancy(ctx context.Context, ttl time.Duration) (bool, error) {
	cs, err := e.channelStates()
	if err != nil {
		return false, err
	}
	lost, err := cs.KeepChannelOccupancy(ctx, ttl)
	return lost, wrap(err, 0)
}

// ReleaseChannelOccupancy implements engine.ChannelStates on the first shard.
func (e *Engine) ReleaseChannelOccupancy(ctx context.Context) error {
	cs, err := e.channelStates()
	if err != nil {
		return err
	}
	return wrap(cs.ReleaseChannelOccupancy(ctx), 0)
}

// DeliverChannelStates implements engine.ChannelStates on the first shard.
func (e *Engine) DeliverChannelStates(ctx context.Context, limit int, fn func(context.Context, []engine.ChannelStateEvent) error) (int, error) {
	cs, err := e.channelStates()
	if err != nil {
		return 0, err
	}
	n, err := cs.DeliverChannelStates(ctx, limit, fn)
	return n, wrap(err, 0)
}

// ChannelStateEventsDropped implements engine.ChannelStateDropCounter
// with the first shard's count (0 when it bounds no queue).
func (e *Engine) ChannelStateEventsDropped() uint64 {
	cs, err := e.channelStates()
	if err != nil {
		return 0
	}
	if dc, ok := cs.(engine.ChannelStateDropCounter); ok {
		return dc.ChannelStateEventsDropped()
	}
	return 0
}
