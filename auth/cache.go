package auth

import (
	"bytes"
	"crypto/sha256"
	"maps"
	"slices"
	"sync"
	"time"
)

// tokenCache remembers connection tokens this Verifier has already found
// valid, so that a client reconnecting with the same token (a flapping
// network, a reconnect storm) costs a hash and a map look-up instead of a
// signature check and a JSON decode.
//
// It is owned by one Verifier, so a different key, audience or issuer (a new
// Verifier) never sees results verified under the old ones. Entries are keyed
// by the SHA-256 of the whole token: two tokens share an entry only if they
// are byte for byte equal, short of a SHA-256 collision. Only valid tokens are
// stored, each with its exp, and exp is checked again on every hit, so an
// entry is never served past its token's lifetime. Once full, an arbitrary
// entry (Go's randomised map order) makes room: eviction only costs a later
// verification, and random choice cannot be steered by a client the way LRU
// order can.
type tokenCache struct {
	size int // most entries kept

	mu      sync.Mutex
	entries map[[sha256.Size]byte]cachedToken
}

type cachedToken struct {
	tok ConnectToken // owned by the cache: handed out only as clones
	// exp is the token's exp in unix nanoseconds, 0 for a token without one.
	exp int64
	// drop is when the entry stops being served, without the token being
	// expired (a previous key's validity ends), in unix nanoseconds; 0
	// for never.
	drop int64
}

// maxCachedTokenLen bounds the tokens the cache takes, and with it the
// memory of one entry (its claims are shorter than the token): with the
// default size the cache holds at most about 25 MiB, and a few MiB with
// tokens of usual size (200 to 500 bytes).
const maxCachedTokenLen = 2048

// tokenKey hashes a token of at most maxCachedTokenLen bytes. The token is
// copied to the stack first: converting the string for sha256.Sum256 would
// allocate as much as the token on every look-up.
func tokenKey(token string) [sha256.Size]byte {
	var buf [maxCachedTokenLen]byte
	return sha256.Sum256(append(buf[:0], token...))
}

func newTokenCache(size int) *tokenCache {
	if size <= 0 {
		return nil
	}
	return &tokenCache{size: size, entries: make(map[[sha256.Size]byte]cachedToken)}
}

// get returns a copy of the cached token; expired reports a hit whose exp has
// passed (the entry is dropped). A miss returns ok false.
func (c *tokenCache) get(key [sha256.Size]byte, now time.Time) (tok ConnectToken, ok, expired bool) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok && e.exp != 0 && now.UnixNano() >= e.exp {
		delete(c.entries, key)
		c.mu.Unlock()
		return ConnectToken{}, false, true
	}
	if ok && e.drop != 0 && now.UnixNano() >= e.drop {
		// Verified again, with the keys valid now.
		delete(c.entries, key)
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		return ConnectToken{}, false, false
	}
	// Cloned outside the lock: the entry is never modified once stored.
	return e.tok.clone(), true, false
}

// put stores a copy of tok, so the caller may keep and change its own.
// A non-zero until is when the entry must be verified again.
func (c *tokenCache) put(key [sha256.Size]byte, tok ConnectToken, exp, until time.Time) {
	var e cachedToken
	e.tok = tok.clone()
	if !exp.IsZero() {
		e.exp = exp.UnixNano()
	}
	if !until.IsZero() {
		e.drop = until.UnixNano()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.size {
		for k := range c.entries {
			delete(c.entries, k)
			break
		}
	}
	c.entries[key] = e
}

// len is the number of entries, for tests.
func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// clone copies every slice, map and pointer of t, so that neither the cache
// nor any caller can change what another one holds.
func (t ConnectToken) clone() ConnectToken {
	t.Info = bytes.Clone(t.Info)
	t.Meta = bytes.Clone(t.Meta)
	t.Channels = slices.Clone(t.Channels)
	if t.Subs != nil {
		subs := maps.Clone(t.Subs)
		for ch, o := range subs {
			subs[ch] = o.clone()
		}
		t.Subs = subs
	}
	return t
}

func (o SubOptions) clone() SubOptions {
	o.Info = bytes.Clone(o.Info)
	o.Data = bytes.Clone(o.Data)
	if o.Override != nil {
		v := *o.Override
		v.Presence = cloneBool(v.Presence)
		v.JoinLeave = cloneBool(v.JoinLeave)
		v.ForcePushJoinLeave = cloneBool(v.ForcePushJoinLeave)
		v.ForceRecovery = cloneBool(v.ForceRecovery)
		v.ForcePositioning = cloneBool(v.ForcePositioning)
		o.Override = &v
	}
	return o
}

func cloneBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}
