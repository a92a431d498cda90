package hub

import (
	"container/list"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// keyedLimiter is a token bucket per key (a client address, a session). It
// remembers at most max keys, least recently seen out first, so a flood of
// distinct keys costs bounded memory: a forgotten key only starts again
// with a full bucket, which it would have had after idling anyway.
type keyedLimiter struct {
	limit rate.Limit
	burst int
	max   int

	mu    sync.Mutex
	byKey map[string]*list.Element // value: *keyedBucket
	lru   list.List                // front: most recently seen
}

type keyedBucket struct {
	key string
	lim *rate.Limiter
}

// newKeyedLimiter allows perSecond requests per key on average, burst at
// once; perSecond <= 0 allows everything.
func newKeyedLimiter(perSecond float64, burst, maxKeys int) *keyedLimiter {
	return &keyedLimiter{limit: rate.Limit(perSecond), burst: max(burst, 1), max: maxKeys, byKey: make(map[string]*list.Element)}
}

// allow takes one token from key's bucket, reporting false when it has
// none left.
func (l *keyedLimiter) allow(key string, now time.Time) bool {
	if l.limit <= 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var b *keyedBucket
	if e, ok := l.byKey[key]; ok {
		l.lru.MoveToFront(e)
		b = e.Value.(*keyedBucket)
	} else {
		if l.lru.Len() >= l.max {
			oldest := l.lru.Back()
			l.lru.Remove(oldest)
			delete(l.byKey, oldest.Value.(*keyedBucket).key)
		}
		b = &keyedBucket{key: key, lim: rate.NewLimiter(l.limit, l.burst)}
		l.byKey[key] = l.lru.PushFront(b)
	}
	return b.lim.AllowN(now, 1)
}
