package ratelimit

import (
	"testing"
	"time"
)

// TestSetAllBucketsOrNone: a key with two buckets takes a token from both
// or neither, and refills at rate per interval.
func TestSetAllBucketsOrNone(t *testing.T) {
	t.Parallel()
	s := NewSet()
	spec := []Bucket{{Interval: time.Second, Rate: 2}, {Interval: time.Minute, Rate: 3}}
	now := time.Unix(1000, 0)
	for i := range 2 {
		if !s.Allow("k", spec, now, false) {
			t.Fatalf("operation %d within both buckets refused", i)
		}
	}
	if s.Allow("k", spec, now, false) {
		t.Fatal("third operation in the same second allowed")
	}
	// A second later the first bucket has 2 again, the second only 1 (plus
	// what a second refills of 3 a minute): one more, not two.
	now = now.Add(time.Second)
	if !s.Allow("k", spec, now, false) {
		t.Fatal("refilled operation refused")
	}
	if s.Allow("k", spec, now, false) {
		t.Fatal("the minute bucket is empty, yet allowed")
	}
	if !s.Allow("other", spec, now, false) {
		t.Fatal("another key shares the buckets")
	}
}

// TestSetForce: a forced operation is charged when refused, and reported.
func TestSetForce(t *testing.T) {
	t.Parallel()
	s := NewSet()
	spec := []Bucket{{Interval: time.Hour, Rate: 1}}
	now := time.Unix(1000, 0)
	if !s.Allow("k", spec, now, true) || s.Allow("k", spec, now, true) {
		t.Fatal("want the first forced operation within, the second over")
	}
	if s.Allow("k", spec, now.Add(time.Hour), false) {
		t.Fatal("the debt of the forced operation was not repaid first")
	}
}

// TestKeyedForgetsIdle: a set unused for longer than idle is dropped.
func TestKeyedForgetsIdle(t *testing.T) {
	t.Parallel()
	k := NewKeyed(time.Minute)
	now := time.Unix(1000, 0)
	k.Set("a", now).Allow("x", []Bucket{{Interval: time.Minute, Rate: 1}}, now, false)
	k.Set("b", now.Add(50*time.Second))
	if k.Len() != 2 {
		t.Fatalf("want 2 sets, got %d", k.Len())
	}
	k.Set("b", now.Add(100*time.Second))
	// At 130s both were used over a minute ago... but b only 30s ago.
	k.Set("c", now.Add(130*time.Second))
	if k.Len() != 2 {
		t.Fatalf("want b and c after the sweep, got %d sets", k.Len())
	}
}
