package sharded

import (
	"context"

	"github.com/heraldhq/herald/engine"
)

// MapEngine is an Engine whose shards all keep map state: map calls go
// to the channel's shard like every other call on a channel. It is a type
// of its own, not methods of Engine, because whether an engine serves map
// namespaces is whether it is an engine.MapBroker (engine.MapsOf): an
// Engine over shards without map state must not claim to be one.
type MapEngine struct {
	*Engine
	maps []engine.MapBroker // one per shard
}

var _ engine.MapBroker = (*MapEngine)(nil)

// WithMaps returns e as a MapEngine when every shard keeps map state
// (engine.MapsOf), and e itself otherwise.
func WithMaps(e *Engine) engine.Engine {
	maps := make([]engine.MapBroker, len(e.shards))
	for i, s := range e.shards {
		mb, ok := engine.MapsOf(s)
		if !ok {
			return e
		}
		maps[i] = mb
	}
	return &MapEngine{Engine: e, maps: maps}
}

// MapPublish changes the map on the channel's shard.
func (e *MapEngine) MapPublish(ctx context.Context, ch string, pub *engine.Publication, opts engine.MapPublishOptions) (engine.StreamPosition, error) {
	i := e.ShardOf(ch)
	sp, err := e.maps[i].MapPublish(ctx, ch, pub, opts)
	return sp, wrap(err, i)
}

// MapState reads a page of the map on the channel's shard.
func (e *MapEngine) MapState(ctx context.Context, ch string, req engine.MapStateRequest) (engine.MapStatePage, error) {
	i := e.ShardOf(ch)
	p, err := e.maps[i].MapState(ctx, ch, req)
	return p, wrap(err, i)
}

// MapStats counts the keys on the channel's shard.
func (e *MapEngine) MapStats(ctx context.Context, ch string) (engine.MapStats, error) {
	i := e.ShardOf(ch)
	s, err := e.maps[i].MapStats(ctx, ch)
	return s, wrap(err, i)
}

// MapClear clears the map on the channel's shard.
func (e *MapEngine) MapClear(ctx context.Context, ch string) error {
	i := e.ShardOf(ch)
	return wrap(e.maps[i].MapClear(ctx, ch), i)
}
