package sqlauth

import (
	"sync"
	"time"
)

// cache keeps recent answers. A generation counter guards against a slow
// query storing an answer computed before an invalidation that arrived
// while it ran: put drops answers from an older generation.
type cache struct {
	mu      sync.Mutex
	entries map[cacheKey]cacheEntry
	limit   int
	gen     uint64
	// usable is false while invalidations may be missed (the listener is
	// down): nothing is read or stored.
	usable bool
}

type cacheKey struct{ action, user, channel string }

type cacheEntry struct {
	allowed bool
	expires time.Time
}

func (c *cache) init(limit int) {
	c.entries = make(map[cacheKey]cacheEntry)
	c.limit = limit
}

func (c *cache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *cache) get(k cacheKey) (allowed, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.usable {
		return false, false
	}
	e, ok := c.entries[k]
	if !ok || time.Now().After(e.expires) {
		return false, false
	}
	return e.allowed, true
}

func (c *cache) put(k cacheKey, allowed bool, expires time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.usable || gen != c.gen {
		return
	}
	if len(c.entries) >= c.limit {
		// Full: drop the expired, and if that is not enough, everything.
		// Simple and bounded; a full cache only costs queries again.
		now := time.Now()
		for key, e := range c.entries {
			if now.After(e.expires) {
				delete(c.entries, key)
			}
		}
		if len(c.entries) >= c.limit {
			clear(c.entries)
		}
	}
	c.entries[k] = cacheEntry{allowed: allowed, expires: expires}
}

// invalidate drops the entries a notification names: all for "" or "*",
// a user's for "user:<id>", a channel's for "channel:<name>". Anything
// else drops all, to be safe.
func (c *cache) invalidate(payload string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	var match func(cacheKey) bool
	switch {
	case len(payload) > 5 && payload[:5] == "user:":
		u := payload[5:]
		match = func(k cacheKey) bool { return k.user == u }
	case len(payload) > 8 && payload[:8] == "channel:":
		ch := payload[8:]
		match = func(k cacheKey) bool { return k.channel == ch }
	default:
		clear(c.entries)
		return
	}
	for k := range c.entries {
		if match(k) {
			delete(c.entries, k)
		}
	}
}

// setUsable turns the cache on (the listener listens) or off and empty.
func (c *cache) setUsable(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.usable = on
	c.gen++
	if !on {
		clear(c.entries)
	}
}
