package memory

import (
	"container/heap"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/engine"
)

// DefaultIdempotencyKeys bounds the idempotency keys the engine remembers
// at once (all shards together) when Config.IdempotencyKeys is 0. At the
// longest key and channel name a key costs about 700 bytes, so the bound
// holds the cache under about 70 MB.
const DefaultIdempotencyKeys = 100_000

// idempotencyCache remembers the results of idempotent publications of
// one shard's channels, under the shard's publish lock. A key is kept
// until its window (the publication's IdempotentResultTTL) ends and never
// forgotten before: forgetting it early would let a retry deliver twice.
// Expired keys go first, in expiry order. Memory is bounded by a count of
// keys shared by every shard of the engine: when that many are within
// their window, a publication with a new key is refused
// (engine.ErrIdempotencyFull) rather than any key evicted early.
type idempotencyCache struct {
	results map[idemKey]idemResult
	expiry  expiryHeap // one entry per key of results, soonest first
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

// reserve takes room for a new key before its publication, from the
// engine's count of held keys (shared by every shard): it first forgets
// up to budget keys of this shard whose window has ended, then refuses
// when limit keys are held. lookup found no live result for the key, and
// an expired one is gone after the sweep, so the key is always new here.
func (c *idempotencyCache) reserve(now int64, budget int, held *atomic.Int64, limit int) error {
	c.expire(now, budget, held)
	if held.Add(1) > int64(limit) {
		held.Add(-1)
		return fmt.Errorf("%w: %d keys are within their window on this node (the memory engine's IdempotencyKeys); retry later", engine.ErrIdempotencyFull, limit)
	}
	return nil
}

// remember stores key's result until now+ttl, in the room reserve took.
func (c *idempotencyCache) remember(ch, key string, sp engine.StreamPosition, now int64, ttl time.Duration) {
	if c.results == nil {
		c.results = make(map[idemKey]idemResult)
	}
	k := idemKey{ch, key}
	r := idemResult{sp: sp, expires: after(now, ttl)}
	c.results[k] = r
	heap.Push(&c.expiry, expiryEntry{key: k, expires: r.expires})
}

// expire forgets at most budget keys whose window ended by now, giving
// their room back to held; it returns how many.
func (c *idempotencyCache) expire(now int64, budget int, held *atomic.Int64) int {
	n := 0
	for n < budget && len(c.expiry) > 0 && c.expiry[0].expires <= now {
		e := heap.Pop(&c.expiry).(expiryEntry)
		delete(c.results, e.key)
		n++
	}
	if n > 0 {
		held.Add(-int64(n))
	}
	if len(c.results) == 0 {
		// Let a burst's map and heap go.
		c.results, c.expiry = nil, nil
	}
	return n
}

// expiryEntry is a key and the end of its window.
type expiryEntry struct {
	key     idemKey
	expires int64
}

// expiryHeap is a min-heap of keys by the end of their window.
type expiryHeap []expiryEntry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].expires < h[j].expires }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiryEntry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = expiryEntry{} // drop the strings
	*h = old[:len(old)-1]
	return e
}
