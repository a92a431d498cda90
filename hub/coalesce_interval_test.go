package hub

import (
	"testing"
	"time"
)

// TestNextIntervalAdapts: the interval stays zero on a node with CPU to
// spare, grows step by step while writes take a large share of the CPUs,
// never past its bound, holds between the two
// thresholds, and shrinks back when the load falls, at once after a long
// quiet spell.
func TestNextIntervalAdapts(t *testing.T) {
	const procs = 2
	w := coalesceWindow
	load := func(share float64) time.Duration { return time.Duration(share * float64(w) * procs) }
	limit := 10 * time.Millisecond

	if got := nextInterval(0, limit, load(0.05), w, procs); got != 0 {
		t.Fatalf("quiet node: interval %v, want 0", got)
	}
	if got := nextInterval(0, limit, load(0.25), w, procs); got != 0 {
		t.Fatalf("moderately loaded node starting from 0: interval %v, want 0", got)
	}

	// Busy: doubles from the first step up to the bound.
	var seen []time.Duration
	iv := time.Duration(0)
	for range 10 {
		iv = nextInterval(iv, limit, load(0.6), w, procs)
		seen = append(seen, iv)
	}
	want := []time.Duration{250 * time.Microsecond, 500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond,
		4 * time.Millisecond, 8 * time.Millisecond, limit, limit, limit, limit}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("busy node: intervals %v, want %v", seen, want)
		}
	}
	if got := nextInterval(0, 100*time.Microsecond, load(0.6), w, procs); got != 100*time.Microsecond {
		t.Fatalf("bound below the first step: interval %v, want the bound", got)
	}

	// Between the thresholds: holds.
	if got := nextInterval(4*time.Millisecond, limit, load(0.25), w, procs); got != 4*time.Millisecond {
		t.Fatalf("moderate load: interval %v, want it held at 4ms", got)
	}

	// Load falls: halves per quiet window, down to zero.
	iv = limit
	seen = seen[:0]
	for range 7 {
		iv = nextInterval(iv, limit, load(0.01), w, procs)
		seen = append(seen, iv)
	}
	want = []time.Duration{5 * time.Millisecond, 2500 * time.Microsecond, 1250 * time.Microsecond, 625 * time.Microsecond,
		312500 * time.Nanosecond, 0, 0}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("falling load: intervals %v, want %v", seen, want)
		}
	}
	// A long quiet spell, measured at the next write, counts as many windows.
	if got := nextInterval(limit, limit, time.Millisecond, time.Second, procs); got != 0 {
		t.Fatalf("after a quiet second: interval %v, want 0", got)
	}

	// The thresholds are more than a factor of two apart: a doubling that
	// halves the writes of a node just over the upper one leaves it above
	// the lower one, so it does not shrink straight back.
	if coalesceGrowAbove/2 <= coalesceShrinkBelow {
		t.Fatalf("thresholds %v and %v: less than a factor of two apart", coalesceGrowAbove, coalesceShrinkBelow)
	}
}

// TestMergeGate: the interval passes half the bound only while the
// window's writes carried coalesceMergeToPass messages each on average; at
// or below half it is never held back.
func TestMergeGate(t *testing.T) {
	const limit = 8 * time.Millisecond // any bound: the gate is at its half
	for _, c := range []struct {
		next              time.Duration
		flushes, messages int64
		want              time.Duration
	}{
		{4 * time.Millisecond, 100, 100, 4 * time.Millisecond}, // at half: free
		{2 * time.Millisecond, 0, 0, 2 * time.Millisecond},
		{8 * time.Millisecond, 100, 120, 4 * time.Millisecond}, // 1.2 a write (200 msg/s): held at half
		{8 * time.Millisecond, 100, 399, 4 * time.Millisecond},
		{8 * time.Millisecond, 100, 400, 8 * time.Millisecond}, // 4 a write (1,000 msg/s): the whole bound
		{8 * time.Millisecond, 0, 0, 4 * time.Millisecond},     // no writes: nothing merged
	} {
		if got := mergeGate(c.next, limit, c.flushes, c.messages); got != c.want {
			t.Errorf("mergeGate(%v, %v, %d flushes, %d messages) = %v, want %v", c.next, limit, c.flushes, c.messages, got, c.want)
		}
	}
}
