package memory

import (
	"context"
	"sync"
	"time"

	"github.com/heraldhq/herald/engine"
)

// The memory engine's engine.RateLimiter: the same GCRA as the Redis
// engine's script (engine/redis/ratelimit.go), in the process, so that a
// configuration with client.rate_limit.redis_user_command runs unchanged
// on one node in development.

var _ engine.RateLimiter = (*Engine)(nil)

// rateSweepEvery is how often the buckets that are full again are
// forgotten.
const rateSweepEvery = time.Minute

// rateState is the engine's buckets, by key.
type rateState struct {
	mu        sync.Mutex
	byKey     map[string]rateEntry
	lastSweep time.Time
}

// rateEntry is a key's theoretical arrival time per bucket, and when
// every bucket is full again.
type rateEntry struct {
	tats []time.Time
	full time.Time
}

// TakeRate implements engine.RateLimiter.
func (e *Engine) TakeRate(_ context.Context, key string, buckets []engine.RateBucket) (bool, error) {
	if len(buckets) == 0 {
		return true, nil
	}
	now := time.Now()
	r := &e.rates
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey == nil {
		r.byKey = make(map[string]rateEntry)
	}
	if now.Sub(r.lastSweep) > rateSweepEvery {
		r.lastSweep = now
		for k, en := range r.byKey {
			if !now.Before(en.full) {
				delete(r.byKey, k)
			}
		}
	}
	en := r.byKey[key]
	next := make([]time.Time, len(buckets))
	var full time.Time
	for i, b := range buckets {
		tat := now
		if i < len(en.tats) && en.tats[i].After(now) {
			tat = en.tats[i]
		}
		tat = tat.Add(b.Interval / time.Duration(b.Rate))
		if tat.Sub(now) > b.Interval {
			return false, nil
		}
		next[i] = tat
		if tat.After(full) {
			full = tat
		}
	}
	r.byKey[key] = rateEntry{tats: next, full: full}
	return true, nil
}
