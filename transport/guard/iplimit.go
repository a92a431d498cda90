package guard

import (
	"container/list"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// defaultIPLimiterEntries bounds how many addresses ipLimiter remembers.
// An entry costs about 200 bytes, so the map stays under ~13 MB however
// many addresses a flood comes from.
const defaultIPLimiterEntries = 65536

// ipLimiter is a token bucket per client address for new connections. It
// remembers at most max addresses, least recently seen out first: a
// forgotten address only starts again with a full bucket, which is what
// it would have had after being idle for burst/limit seconds anyway.
type ipLimiter struct {
	limit rate.Limit
	burst int
	max   int

	mu    sync.Mutex
	byKey map[netip.Addr]*list.Element // value: *ipBucket
	lru   list.List                    // front: most recently seen
}

type ipBucket struct {
	key netip.Addr
	lim *rate.Limiter
}

func newIPLimiter(limit float64, burst, max int) *ipLimiter {
	return &ipLimiter{limit: rate.Limit(limit), burst: burst, max: max, byKey: make(map[netip.Addr]*list.Element)}
}

// allow takes one token from addr's bucket, reporting false when it has
// none left.
func (l *ipLimiter) allow(addr netip.Addr, now time.Time) bool {
	key := ipKey(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	var b *ipBucket
	if e, ok := l.byKey[key]; ok {
		l.lru.MoveToFront(e)
		b = e.Value.(*ipBucket)
	} else {
		if l.lru.Len() >= l.max {
			oldest := l.lru.Back()
			l.lru.Remove(oldest)
			delete(l.byKey, oldest.Value.(*ipBucket).key)
		}
		b = &ipBucket{key: key, lim: rate.NewLimiter(l.limit, l.burst)}
		l.byKey[key] = l.lru.PushFront(b)
	}
	return b.lim.AllowN(now, 1)
}

// size is the number of addresses remembered.
func (l *ipLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byKey)
}

// ipKey is the bucket an address counts against: an IPv4 address (also
// when mapped into IPv6) by itself, an IPv6 address by its /64, since one
// host usually holds a whole /64 and could otherwise open each connection
// from a new address.
func ipKey(addr netip.Addr) netip.Addr {
	addr = addr.Unmap()
	if addr.Is6() {
		p, err := addr.Prefix(64)
		if err == nil {
			return p.Addr()
		}
	}
	return addr.WithZone("")
}
