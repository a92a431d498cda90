package keyedlimit

import (
	"strconv"
	"testing"
	"time"
)

// TestBounded: a flood of distinct keys never grows the map past its
// bound, a forgotten key starts with a full bucket, and a recently seen
// key is not pushed out by one newcomer.
func TestBounded(t *testing.T) {
	now := time.Now()
	l := New[string](0.001, 1, 8)
	if !l.Allow("a", now) || l.Allow("a", now) {
		t.Fatal("burst 1: want the first request allowed and the second refused")
	}
	for i := range 10000 {
		l.Allow(strconv.Itoa(i), now)
		if n := l.Len(); n > 8 {
			t.Fatalf("limiter holds %d keys, bound 8", n)
		}
	}
	if !l.Allow("a", now) {
		t.Fatal("an evicted key must start again with a full bucket")
	}
	l.Allow("busy", now)
	l.Allow("newcomer", now)
	if l.Allow("busy", now) {
		t.Fatal("a recently seen key was forgotten")
	}
}

// TestRefill: a bucket refills at the rate, and keys do not share one.
func TestRefill(t *testing.T) {
	now := time.Now()
	l := New[int](10, 2, 16)
	if !l.Allow(1, now) || !l.Allow(1, now) || l.Allow(1, now) {
		t.Fatal("burst 2: want two requests allowed, the third refused")
	}
	if !l.Allow(2, now) {
		t.Fatal("another key must have a bucket of its own")
	}
	if !l.Allow(1, now.Add(100*time.Millisecond)) {
		t.Fatal("10/s: want a token back after 100ms")
	}
}

// TestUnlimited: a rate <= 0 allows everything and remembers nothing.
func TestUnlimited(t *testing.T) {
	l := New[string](0, 0, 0)
	for range 100 {
		if !l.Allow("a", time.Now()) {
			t.Fatal("rate 0 refused a request")
		}
	}
	if n := l.Len(); n != 0 {
		t.Fatalf("rate 0 remembers %d keys", n)
	}
}
