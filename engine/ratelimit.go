package engine

import (
	"context"
	"time"
)

// RateLimiter keeps token buckets for the whole cluster, so that a limit
// per user holds however many nodes the user's connections reach (the
// hub's client.rate_limit.redis_user_command). Each check is one round
// trip to the engine. The Redis engine implements it; see RateLimiterOf.
type RateLimiter interface {
	// TakeRate takes one token for key from each of buckets, from all or
	// from none, and reports whether it could. The buckets of a key must
	// be the same on every call (the key names them).
	TakeRate(ctx context.Context, key string, buckets []RateBucket) (bool, error)
}

// RateBucket is one token bucket: Rate operations per Interval, and as
// many at once.
type RateBucket struct {
	Interval time.Duration
	Rate     int
}

// RateLimiterOf returns the part of e that keeps cluster-wide token
// buckets, looking through wrappers, or false when e keeps none.
func RateLimiterOf(e Engine) (RateLimiter, bool) { return capOf[RateLimiter](e) }
