package config

import (
	"fmt"
	"reflect"

	"github.com/heraldhq/herald/engine/redis"
	"github.com/heraldhq/herald/hub"
)

// RateLimitConfig is client.rate_limit: the hub's options
// (hub.RateLimitConfig), with redis_user_command taking a Redis of its
// own, which the hub does not open (it knows no database).
type RateLimitConfig struct {
	hub.RateLimitConfig `yaml:",inline"`
	RedisUserCommand    RedisUserCommandConfig `yaml:"redis_user_command" doc:"as 'user_command', with the buckets kept for the whole cluster: a user draws from one set of buckets whichever nodes its connections reach, at the cost of a round trip per command. They live in the Redis of 'redis' when it names one (any engine), else in the engine (redis or postgres, sharded or not; memory, in the process, for one node), as Centrifugo PRO's 'reuse_from_engine'. Checked after the in-memory layers, which make a cheap first filter. No 'total' or 'unsubscribe'. If the buckets' store fails the command is allowed"`
}

// RedisUserCommandConfig is client.rate_limit.redis_user_command: the
// hub's layer, and where its buckets live. Centrifugo PRO's key of the
// same shape (centrifugal.dev docs/pro/rate_limiting.md, "Redis per user
// rate limit"): redis_user_command.redis is "Redis configuration ...
// matches Centrifugo Redis engine configuration", or 'reuse_from_engine:
// true' for the engine's Redis. Herald reads the engine.redis keys here,
// and keeps the buckets in the engine when they name no server.
type RedisUserCommandConfig struct {
	hub.CommandRateLimits `yaml:",inline"`
	Redis                 RedisConfig `yaml:"redis" doc:"a Redis of their own for these buckets, with the keys of 'engine.redis' (one deployment: 'address', or 'addresses' for Sentinel or Cluster, not shards; 'prefix' names the keys): set 'address' or 'addresses' and the buckets live there, whatever the engine (memory and postgres included), instead of in the engine; every node names the same Redis. If it cannot be reached the command is allowed and a warning logged, as when the engine fails"`
}

// Hub is the layer as the hub takes it.
func (c RateLimitConfig) Hub() hub.RateLimitConfig {
	out := c.RateLimitConfig
	out.RedisUserCommand = c.RedisUserCommand.CommandRateLimits
	return out
}

// Hub is the client section as the hub takes it.
func (c ClientConfig) Hub() hub.ClientConfig {
	out := c.ClientConfig
	out.RateLimit = c.RateLimit.Hub()
	return out
}

// separate reports whether the section names a Redis of its own.
func (r RedisConfig) separate() bool {
	return len(r.Address) > 0 || len(r.Addresses) > 0 || len(r.Shards) > 0
}

// RateLimitRedis returns the options of the Redis that keeps the
// redis_user_command buckets apart from the engine (redis.NewRateLimiter),
// and false when the engine keeps them.
func (c Config) RateLimitRedis() (redis.Config, bool, error) {
	const key = "client.rate_limit.redis_user_command.redis"
	l := c.Client.RateLimit.RedisUserCommand
	if !l.Enabled || !l.Redis.separate() {
		return redis.Config{}, false, nil
	}
	stores, err := l.Redis.stores()
	if err != nil {
		return redis.Config{}, false, fmt.Errorf("%s: %w", key, err)
	}
	if len(stores) != 1 {
		return redis.Config{}, false, fmt.Errorf("%s: %d shards: want one Redis deployment", key, len(stores))
	}
	return stores[0].(redis.Config), true, nil
}

// rateLimitRedisProblems checks client.rate_limit.redis_user_command.redis
// when it names a Redis.
func (c Config) rateLimitRedisProblems(bad func(key, format string, args ...any)) {
	const key = "client.rate_limit.redis_user_command.redis"
	r := c.Client.RateLimit.RedisUserCommand.Redis
	if !r.separate() {
		// Keys without a server would be ignored, the buckets kept in
		// the engine: say so rather than let a password or db mislead.
		if !reflect.DeepEqual(r, Default().Client.RateLimit.RedisUserCommand.Redis) {
			bad(key+".address", "the section names no server: set 'address' (or 'addresses') for a Redis of the buckets' own, or leave the section out to keep them in the engine")
		}
		return
	}
	const one = "one Redis deployment keeps the buckets: one 'address', or 'addresses' for Sentinel or Cluster; not shards"
	switch {
	case len(r.Shards) > 0:
		bad(key+".shards", one)
	case len(r.Addresses) == 0 && len(r.Address) > 1:
		bad(key+".address", one)
	case len(r.Address) > 0 && len(r.Addresses) > 0:
		bad(key+".addresses", "not with 'address': one or the other")
	}
	if r.SentinelMaster != "" && r.Cluster {
		bad(key+".cluster", "not with 'sentinel_master': Sentinel and Cluster exclude each other")
	}
	if r.MinReplicas > 0 {
		bad(key+".min_replicas", "publications only: the buckets do not wait for replicas")
	}
	if _, err := r.TLS.Config(); err != nil {
		bad(key+".tls", "%v", err)
	}
}
