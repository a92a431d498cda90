package memory

import (
	"time"

	"github.com/heraldhq/herald/engine"
)

// DefaultIdempotencyKeys bounds the idempotency keys each shard remembers
// when Config.IdempotencyKeys is 0.
const DefaultIdempotencyKeys = 10000

// idempotencyCache remembers the results of idempotent publications of
// one shard's channels, under the shard's publish lock. It is bounded:
// when full, the oldest key is forgotten first, expired or not, so memory
// stays bounded whatever callers send; a key forgotten early can only
// make a retry deliver twice, never lose a publication.
type idempotencyCache struct {
	results map[idemKey]idemResult
	order   []idemKey // insertion order, oldest first (a ring from head)
	head    int
}

type idemKey struct{ channel, key string }

type idemResult struct {
	sp      engine.StreamPosition
	expires int64 // Unix nanoseconds
}

// lookup returns the remembered result of key in ch, if it has not
// expired.
func (c *idempotencyCache) lookup(ch, key string, now int64) (engine.StreamPosition, bool) {
	r, ok := c.results[idemKey{ch, key}]
	if !ok || r.expires <= now {
		return engine.StreamPosition{}, false
	}
	return r.sp, true
}

// remember stores key's result for ttl, forgetting the oldest key when
// the cache holds limit keys.
func (c *idempotencyCache) remember(ch, key string, sp engine.StreamPosition, now int64, ttl time.Duration, limit int) {
	if c.results == nil {
		c.results = make(map[idemKey]idemResult)
	}
	k := idemKey{ch, key}
	if _, ok := c.results[k]; !ok {
		if len(c.order) < limit {
			c.order = append(c.order, k)
		} else {
			delete(c.results, c.order[c.head])
			c.order[c.head] = k
			c.head = (c.head + 1) % len(c.order)
		}
	}
	c.results[k] = idemResult{sp: sp, expires: now + int64(ttl)}
}
