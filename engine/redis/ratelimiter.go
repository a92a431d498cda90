package redis

import (
	"context"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
)

// RateLimiter keeps cluster-wide token buckets (engine.RateLimiter) in a
// Redis of their own, without the rest of an engine: no subscriptions, no
// background work, one command connection pool. It serves Centrifugo
// PRO's client.rate_limit.redis_user_command.redis, which gives the
// per-user buckets a Redis apart from the engine's (or none: any engine,
// memory and postgres included). The buckets and their keys are the
// Redis engine's (ratelimit.go), so an Engine and a RateLimiter on one
// server with one prefix share them.
type RateLimiter struct {
	client goredis.UniversalClient
	keys   keyspace
}

var _ engine.RateLimiter = (*RateLimiter)(nil)

// NewRateLimiter checks opts (Addrs, credentials, DB, TLS, Prefix,
// PoolSize; the engine's other options are not used) and makes the
// client. It does not wait for Redis: a limiter whose Redis is down at
// start answers errors as it does when Redis goes away later, and the
// hub then allows the commands, so that a limit does not keep a node
// from starting.
func NewRateLimiter(opts Config) (*RateLimiter, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &RateLimiter{client: opts.newClient(), keys: newKeyspace(opts.Prefix)}, nil
}

// TakeRate implements engine.RateLimiter.
func (r *RateLimiter) TakeRate(ctx context.Context, key string, buckets []engine.RateBucket) (bool, error) {
	if len(buckets) == 0 {
		return true, nil
	}
	return takeRateOn(ctx, r.client, r.keys, key, buckets, "redis rate limiter")
}

// Close closes the client's connections.
func (r *RateLimiter) Close() error { return r.client.Close() }
