// Package ratelimit holds the token buckets of the hub's operation rate
// limits (client.rate_limit): sets of buckets that must all allow an
// operation, kept per connection or per user and created on first use. It
// knows nothing of commands or clients: the hub names the key (a command,
// "rpc.<method>") and passes the buckets that apply to it.
package ratelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Bucket is one token bucket: Rate operations per Interval, and as many at
// once (its capacity), as Centrifugo PRO's buckets are read.
type Bucket struct {
	Interval time.Duration
	Rate     int
}

// limiter is the buckets of one key; an operation takes a token from each
// or from none.
type limiter []*rate.Limiter

func newLimiter(spec []Bucket) limiter {
	l := make(limiter, len(spec))
	for i, b := range spec {
		l[i] = rate.NewLimiter(rate.Limit(float64(b.Rate)/b.Interval.Seconds()), b.Rate)
	}
	return l
}

// allow takes a token from every bucket at now, or, when one is empty,
// gives back those already taken and reports false. With force the tokens
// are taken whatever the outcome (an operation that is counted but never
// refused): an empty bucket goes into debt, which later operations repay.
func (l limiter) allow(now time.Time, force bool) bool {
	ok := true
	var taken [4]*rate.Reservation // most keys have one or two buckets
	rs := taken[:0]
	for _, b := range l {
		r := b.ReserveN(now, 1)
		if r.OK() && r.DelayFrom(now) == 0 {
			rs = append(rs, r)
			continue
		}
		ok = false
		if force {
			continue
		}
		r.CancelAt(now)
		for _, t := range rs {
			t.CancelAt(now)
		}
		return false
	}
	return ok
}

// Set is the limiters of one connection or user, by key. It is safe for
// concurrent use (a connection may run commands side by side).
type Set struct {
	mu       sync.Mutex
	byKey    map[string]limiter
	lastUsed time.Time
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{byKey: make(map[string]limiter)} }

// Allow takes a token for key from the buckets spec (the same spec every
// time for a key: it is read only when the key is first seen). With force
// the token is taken even when the buckets are empty, and the result says
// whether they were.
func (s *Set) Allow(key string, spec []Bucket, now time.Time, force bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastUsed = now
	l, ok := s.byKey[key]
	if !ok {
		l = newLimiter(spec)
		s.byKey[key] = l
	}
	return l.allow(now, force)
}

// Keyed is a Set per user, forgotten once idle for longer than it takes
// every bucket to fill again (a new set starts full, so forgetting it
// changes nothing).
type Keyed struct {
	mu        sync.Mutex
	byKey     map[string]*Set
	idle      time.Duration
	lastSweep time.Time
}

// NewKeyed returns an empty Keyed whose sets are forgotten after idle.
func NewKeyed(idle time.Duration) *Keyed {
	return &Keyed{byKey: make(map[string]*Set), idle: idle}
}

// Set returns the set of key, created when missing. Now and then (once
// per idle period) it forgets the sets that have been idle that long.
func (k *Keyed) Set(key string, now time.Time) *Set {
	k.mu.Lock()
	defer k.mu.Unlock()
	if now.Sub(k.lastSweep) > k.idle {
		k.lastSweep = now
		for key, s := range k.byKey {
			s.mu.Lock()
			idle := now.Sub(s.lastUsed) > k.idle
			s.mu.Unlock()
			if idle {
				delete(k.byKey, key)
			}
		}
	}
	s, ok := k.byKey[key]
	if !ok {
		s = NewSet()
		s.lastUsed = now
		k.byKey[key] = s
	}
	return s
}

// Len is how many sets are held.
func (k *Keyed) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.byKey)
}
