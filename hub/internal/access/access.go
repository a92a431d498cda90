// Package access holds what the cluster has said about tokens and users:
// revoked token ids, users whose tokens issued before a time are invalid
// (for every channel or for one), and blocked users. It is a node's
// in-memory copy, filled from the engine's store at start and kept current
// by the changes every node is sent, so that checking a connect or a
// subscribe costs a map lookup, never a round-trip. It knows nothing of
// clients, engines or the wire: the hub loads it, applies changes to it
// and asks it.
package access

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The buckets of the engine's store that the state is kept in, and how an
// entry's key and value are written there.
const (
	// BucketRevoked: key a token id (jti), value empty.
	BucketRevoked = "revoked_tokens"
	// BucketInvalidated: key "u:" and a user, or for one channel "c:",
	// the user's length, ":", the user and the channel (invalidationKey);
	// value the Unix second before which tokens are invalid.
	BucketInvalidated = "invalidated_tokens"
	// BucketBlocked: key a user, value empty.
	BucketBlocked = "blocked_users"
)

// Kind is what a Change is about.
type Kind string

const (
	Revoke     Kind = "revoke"
	Invalidate Kind = "invalidate"
	Block      Kind = "block"
	Unblock    Kind = "unblock"
)

// Change is one decision, as the API makes it and every node applies it.
type Change struct {
	Kind Kind `json:"kind"`
	// ID is the revoked token's jti (Revoke).
	ID string `json:"id,omitempty"`
	// User is the user blocked, unblocked or whose tokens are invalidated.
	User string `json:"user,omitempty"`
	// Channel limits an invalidation to the user's subscription tokens of
	// one channel; empty means the connection tokens (and with them the
	// connection).
	Channel string `json:"channel,omitempty"`
	// IssuedBefore: tokens with an iat before it (Unix seconds) are
	// invalid (Invalidate).
	IssuedBefore int64 `json:"issued_before,omitempty"`
	// ExpireAt is when the record may be forgotten (Unix seconds); 0 keeps
	// it until undone.
	ExpireAt int64 `json:"expire_at,omitempty"`
}

// StoreKey is where the change is kept in the engine's store: bucket and
// key, and the value (nil for a removal).
func (c Change) StoreKey() (bucket, key string, value []byte, remove bool) {
	switch c.Kind {
	case Revoke:
		return BucketRevoked, c.ID, []byte{}, false
	case Invalidate:
		return BucketInvalidated, invalidationKey(c.User, c.Channel), []byte(strconv.FormatInt(c.IssuedBefore, 10)), false
	case Block:
		return BucketBlocked, c.User, []byte{}, false
	case Unblock:
		return BucketBlocked, c.User, nil, true
	}
	return "", "", nil, false
}

// invalidationKey is where an invalidation is kept: the prefix tells a
// user's key from a channel's, and the user's length keeps two user and
// channel pairs from sharing a key. (A NUL, which PostgreSQL's text
// cannot hold, is not a separator here.)
func invalidationKey(user, channel string) string {
	if channel == "" {
		return "u:" + user
	}
	return "c:" + strconv.Itoa(len(user)) + ":" + user + channel
}

// entry is a record and when it may be forgotten (Unix seconds, 0 never).
type entry struct {
	before   int64 // invalidations only
	expireAt int64
	// applied is when Apply recorded it (Unix nanoseconds; 0 when loaded),
	// so that a Load of a scan that began earlier does not undo it.
	applied int64
	// removed marks an unblock, kept as applied until a Load no older
	// than it.
	removed bool
}

func (e entry) live(now int64) bool { return e.expireAt == 0 || now < e.expireAt }

// State is the node's copy. The zero value is empty and ready.
type State struct {
	mu          sync.RWMutex
	revoked     map[string]entry
	invalidated map[string]entry
	blocked     map[string]entry
	// size counts the records, so that the checks made on every connect
	// take no lock while nothing was ever revoked or blocked.
	size atomic.Int64
}

// Apply records c.
func (s *State) Apply(c Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := entry{expireAt: c.ExpireAt, applied: time.Now().UnixNano()}
	switch c.Kind {
	case Revoke:
		s.revoked = put(s.revoked, c.ID, e)
	case Invalidate:
		k := invalidationKey(c.User, c.Channel)
		if old, ok := s.invalidated[k]; ok && old.before > c.IssuedBefore {
			// An older, wider invalidation stays: a later call cannot
			// make tokens valid again.
			e.before = old.before
		} else {
			e.before = c.IssuedBefore
		}
		s.invalidated = put(s.invalidated, k, e)
	case Block:
		s.blocked = put(s.blocked, c.User, e)
	case Unblock:
		e.removed = true
		s.blocked = put(s.blocked, c.User, e)
	}
	s.recount()
}

// Load replaces what the state holds of bucket with the entries read from
// the store (key to value and expiry) by a scan that began at scanStart;
// it is how a node starts, and how it corrects itself now and then
// against changes it may have missed. What Apply recorded after
// scanStart stays as applied, since the scan may predate it.
func (s *State) Load(bucket string, entries map[string]Stored, scanStart time.Time) {
	m := make(map[string]entry, len(entries))
	for k, st := range entries {
		e := entry{expireAt: st.ExpireAt}
		if bucket == BucketInvalidated {
			e.before, _ = strconv.ParseInt(string(st.Value), 10, 64)
		}
		m[k] = e
	}
	since := scanStart.UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	var old *map[string]entry
	switch bucket {
	case BucketRevoked:
		old = &s.revoked
	case BucketInvalidated:
		old = &s.invalidated
	case BucketBlocked:
		old = &s.blocked
	default:
		return
	}
	for k, e := range *old {
		if e.applied >= since {
			m[k] = e
		}
	}
	*old = m
	s.recount()
}

// Stored is an entry as read from the engine's store.
type Stored struct {
	Value    []byte
	ExpireAt int64
}

// Sweep forgets the records that expired by now.
func (s *State) Sweep(now time.Time) {
	t := now.Unix()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range []map[string]entry{s.revoked, s.invalidated, s.blocked} {
		for k, e := range m {
			if !e.live(t) || (e.removed && now.UnixNano()-e.applied > int64(time.Minute)) {
				delete(m, k)
			}
		}
	}
	s.recount()
}

// Size is how many records the state holds.
func (s *State) Size() int { return int(s.size.Load()) }

func (s *State) recount() {
	s.size.Store(int64(len(s.revoked) + len(s.invalidated) + len(s.blocked)))
}

func put(m map[string]entry, k string, e entry) map[string]entry {
	if m == nil {
		m = map[string]entry{}
	}
	m[k] = e
	return m
}

// Token is what a check needs of a token: its user, id (jti) and issue
// time (iat, Unix seconds; 0 when the token has none).
type Token struct {
	User     string
	ID       string
	IssuedAt int64
}

// Verdict is why a token or user is refused, or Allowed.
type Verdict int

const (
	Allowed Verdict = iota
	// Revoked: the token's id was revoked.
	Revoked
	// Invalidated: the token was issued before its user's tokens were
	// invalidated.
	Invalidated
	// Blocked: the user is blocked.
	Blocked
)

// CheckConnection judges a connection's user and token at now.
func (s *State) CheckConnection(t Token, now time.Time) Verdict {
	return s.check(t, "", now)
}

// CheckSubscription judges a subscription token of channel at now; the
// connection itself was judged when it connected.
func (s *State) CheckSubscription(t Token, channel string, now time.Time) Verdict {
	if channel == "" {
		return Allowed
	}
	return s.check(t, channel, now)
}

func (s *State) check(t Token, channel string, now time.Time) Verdict {
	if s.size.Load() == 0 {
		return Allowed
	}
	sec := now.Unix()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if channel == "" && t.User != "" {
		if e, ok := s.blocked[t.User]; ok && !e.removed && e.live(sec) {
			return Blocked
		}
	}
	if t.ID != "" {
		if e, ok := s.revoked[t.ID]; ok && e.live(sec) {
			return Revoked
		}
	}
	if t.User != "" && t.IssuedAt > 0 {
		if e, ok := s.invalidated[invalidationKey(t.User, channel)]; ok && e.live(sec) && t.IssuedAt < e.before {
			return Invalidated
		}
	}
	return Allowed
}
