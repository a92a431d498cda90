package enginetest

import (
	"bytes"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// delivery is one HandlePublication call.
type delivery struct {
	pub *engine.Publication
	pos engine.StreamPosition
}

// recorder is the Handler every test node runs with. It keeps what it was
// given per channel and wakes waiters on every event, so tests wait for
// exactly the events they expect instead of sleeping.
type recorder struct {
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every event
	pubs     map[string][]delivery
	joins    map[string][]*engine.ClientInfo
	leaves   map[string][]*engine.ClientInfo
	controls [][]byte
}

var _ engine.Handler = (*recorder)(nil)

func newRecorder() *recorder {
	return &recorder{
		changed: make(chan struct{}),
		pubs:    make(map[string][]delivery),
		joins:   make(map[string][]*engine.ClientInfo),
		leaves:  make(map[string][]*engine.ClientInfo),
	}
}

// record runs add under the lock and wakes the waiters.
func (r *recorder) record(add func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	add()
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) HandlePublication(ch string, pub *engine.Publication, sp engine.StreamPosition) {
	r.record(func() { r.pubs[ch] = append(r.pubs[ch], delivery{pub: pub, pos: sp}) })
}

func (r *recorder) HandleJoin(ch string, info *engine.ClientInfo) {
	r.record(func() { r.joins[ch] = append(r.joins[ch], info) })
}

func (r *recorder) HandleLeave(ch string, info *engine.ClientInfo) {
	r.record(func() { r.leaves[ch] = append(r.leaves[ch], info) })
}

func (r *recorder) HandleControl(data []byte) {
	r.record(func() { r.controls = append(r.controls, data) })
}

// sawControl reports whether data arrived as a control message; the
// caller holds r.mu (as await's conditions do).
func (r *recorder) sawControl(data []byte) bool {
	return slices.ContainsFunc(r.controls, func(c []byte) bool { return bytes.Equal(c, data) })
}

// hasControl is sawControl for callers that do not hold r.mu.
func (r *recorder) hasControl(data []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sawControl(data)
}

// await waits until cond, which runs under the recorder's lock, holds, and
// fails the test after timeout.
func (r *recorder) await(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ok := cond()
		changed := r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

// awaitPubs waits until ch has at least n deliveries and returns them all.
func (r *recorder) awaitPubs(t testing.TB, ch string, n int) []delivery {
	t.Helper()
	r.await(t, eventTimeout, "publications on "+ch, func() bool { return len(r.pubs[ch]) >= n })
	return r.pubsOf(ch)
}

func (r *recorder) pubsOf(ch string) []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.pubs[ch]...)
}

func (r *recorder) joinsOf(ch string) []*engine.ClientInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*engine.ClientInfo(nil), r.joins[ch]...)
}

func (r *recorder) leavesOf(ch string) []*engine.ClientInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*engine.ClientInfo(nil), r.leaves[ch]...)
}

// Eventually polls check every 20ms until it returns "" (success) and
// fails the test with check's last complaint after timeout. It is for
// state the handler is not told about, such as expiry or an engine's
// reconnect counters; it must run on the test's goroutine.
func Eventually(t testing.TB, timeout time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still after %v: %s", timeout, msg)
		}
		<-tick.C
	}
}
