package enginetest

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// Delivery is one HandlePublication call a Recorder saw.
type Delivery struct {
	Pub      *engine.Publication
	Position engine.StreamPosition
}

// Recorder is an engine.Handler that records what it is given, per
// channel, and lets a test wait for the events it expects instead of
// sleeping. It is the handler the conformance suite runs its nodes with,
// exported for engines' own tests (fault injection, benchmarks). It is
// safe for concurrent use.
type Recorder struct {
	*recorder
}

var _ engine.Handler = (*Recorder)(nil)

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{newRecorder()} }

// Publications returns the publications delivered on ch so far, in
// delivery order.
func (r *Recorder) Publications(ch string) []Delivery {
	got := r.pubsOf(ch)
	out := make([]Delivery, len(got))
	for i, d := range got {
		out[i] = Delivery{Pub: d.pub, Position: d.pos}
	}
	return out
}

// WaitForPublications waits until ch has had at least n publications and
// returns all of them; it fails the test after timeout.
func (r *Recorder) WaitForPublications(t testing.TB, ch string, n int, timeout time.Duration) []Delivery {
	t.Helper()
	r.WaitForPublicationCount(t, ch, n, timeout)
	return r.Publications(ch)
}

// WaitForPublicationCount is WaitForPublications without the copy of the
// publications, for loops that wait for one more each time.
func (r *Recorder) WaitForPublicationCount(t testing.TB, ch string, n int, timeout time.Duration) {
	t.Helper()
	r.await(t, timeout, "publications on "+ch, func() bool { return len(r.pubs[ch]) >= n })
}

// Joins returns the join events delivered on ch so far, in order.
func (r *Recorder) Joins(ch string) []*engine.ClientInfo { return r.joinsOf(ch) }

// Controls returns the control messages delivered so far, in order.
func (r *Recorder) Controls() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.controls...)
}

// WaitForControls waits until at least n control messages have arrived
// and returns them all; it fails the test after timeout.
func (r *Recorder) WaitForControls(t testing.TB, n int, timeout time.Duration) [][]byte {
	t.Helper()
	r.await(t, timeout, "control messages", func() bool { return len(r.controls) >= n })
	return r.Controls()
}
