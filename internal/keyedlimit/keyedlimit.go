// Package keyedlimit is a token bucket per key with bounded memory, shared
// by the transports' per-address connection rate (transport/guard) and the
// hub's emulation request rates (per address and per session).
package keyedlimit

import (
	"container/list"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter is a token bucket per key. It remembers at most a fixed number
// of keys, least recently seen out first, so that a flood of distinct keys
// costs bounded memory (about 200 bytes a key): a forgotten key only starts
// again with a full bucket, which it would have had after idling for
// burst/rate seconds anyway. Its methods are safe for concurrent use.
type Limiter[K comparable] struct {
	limit rate.Limit
	burst int
	max   int

	mu    sync.Mutex
	byKey map[K]*list.Element // value: *bucket[K]
	lru   list.List           // front: most recently seen
}

type bucket[K comparable] struct {
	key K
	lim *rate.Limiter
}

// New allows perSecond requests per key on average and burst at once
// (at least 1), remembering at most maxKeys keys (at least 1). perSecond
// <= 0 allows everything.
func New[K comparable](perSecond float64, burst, maxKeys int) *Limiter[K] {
	return &Limiter[K]{limit: rate.Limit(perSecond), burst: max(burst, 1), max: max(maxKeys, 1), byKey: make(map[K]*list.Element)}
}

// Allow takes one token from key's bucket at now, reporting false when it
// has none left.
func (l *Limiter[K]) Allow(key K, now time.Time) bool {
	if l.limit <= 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var b *bucket[K]
	if e, ok := l.byKey[key]; ok {
		l.lru.MoveToFront(e)
		b = e.Value.(*bucket[K])
	} else {
		if l.lru.Len() >= l.max {
			oldest := l.lru.Back()
			l.lru.Remove(oldest)
			delete(l.byKey, oldest.Value.(*bucket[K]).key)
		}
		b = &bucket[K]{key: key, lim: rate.NewLimiter(l.limit, l.burst)}
		l.byKey[key] = l.lru.PushFront(b)
	}
	return b.lim.AllowN(now, 1)
}

// Len is the number of keys remembered.
func (l *Limiter[K]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byKey)
}
