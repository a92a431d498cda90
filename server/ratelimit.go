package server

import (
	"fmt"

	"github.com/heraldhq/herald/engine/redis"
)

// rateLimiter opens the Redis of client.rate_limit.redis_user_command.redis
// when the file gives those buckets one of their own; the hub step hands
// it to the hub instead of the engine's. It does not wait for Redis: one
// that is down allows the commands (hub/ratelimit.go) rather than keep
// the node from starting.
func (b *builder) rateLimiter() error {
	opts, ok, err := b.s.cfg.RateLimitRedis()
	if err != nil || !ok {
		return err
	}
	rl, err := redis.NewRateLimiter(opts)
	if err != nil {
		return fmt.Errorf("client.rate_limit.redis_user_command.redis: %w", err)
	}
	b.s.rateLimiter = rl
	b.onFailure(func() { _ = rl.Close() })
	return nil
}
