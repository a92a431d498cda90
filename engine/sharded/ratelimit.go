package sharded

import (
	"context"
	"fmt"

	"github.com/heraldhq/herald/engine"
)

// The buckets of a rate limit key live on the shard the key hashes to,
// as a channel's state does: each check is one round trip to one shard,
// and the load of many users spreads over the shards. A change of the
// shard list moves keys, which only refills their buckets.

var _ engine.RateLimiter = (*Engine)(nil)

// TakeRate implements engine.RateLimiter on the key's shard.
func (e *Engine) TakeRate(ctx context.Context, key string, buckets []engine.RateBucket) (bool, error) {
	i := ShardOf(key, len(e.shards))
	rl, ok := engine.RateLimiterOf(e.shards[i])
	if !ok {
		return false, fmt.Errorf("sharded engine: shard %d (%T) keeps no rate limit buckets", i, e.shards[i])
	}
	allowed, err := rl.TakeRate(ctx, key, buckets)
	return allowed, wrap(err, i)
}
