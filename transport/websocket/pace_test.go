package websocket

import (
	"testing"
	"time"
)

// TestPeerPace: a client counts as reading once it took minWriteProgress
// in two spans, each at least one window long; one span (what a client
// that never reads has its kernel take into its receive buffer) is not
// enough, a span shorter than a window changes nothing, and a span that
// fell short (a reader starved of CPU) does not undo it.
func TestPeerPace(t *testing.T) {
	const w = time.Second
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	type step struct {
		at   int64 // ms since the connection's start
		took uint64
		want bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"one span fills the receive buffer, then nothing", []step{
			{1000, 200 << 10, false}, {2000, 200 << 10, false}, {3000, 200 << 10, false},
		}},
		{"two spans in a row", []step{
			{1000, 64 << 10, false}, {2000, 128 << 10, true},
		}},
		{"a span shorter than a window keeps the verdict", []step{
			{1000, 64 << 10, false}, {2000, 128 << 10, true}, {2100, 128 << 10, true},
		}},
		{"a span that fell short does not undo it", []step{
			{1000, 64 << 10, false}, {2000, 128 << 10, true}, {3000, 130 << 10, true}, {4000, 130 << 10, true},
		}},
		{"two spans apart", []step{
			{1000, 64 << 10, false}, {2000, 70 << 10, false}, {3000, 90 << 10, true},
		}},
		{"a long quiet span needs no more than a short one", []step{
			{60000, 16 << 10, false}, {120000, 32 << 10, true},
		}},
		{"a count that goes back is ignored", []step{
			{1000, 64 << 10, false}, {2000, 128 << 10, true}, {3000, 10, true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p peerPace
			for i, s := range tc.steps {
				if got := p.reading(s.took, ms(s.at), w); got != s.want {
					t.Fatalf("step %d (%d ms, took %d): reading = %v, want %v", i, s.at, s.took, got, s.want)
				}
			}
		})
	}
}
