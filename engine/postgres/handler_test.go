package postgres

import (
	"fmt"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/heraldhq/herald/engine"
)

// delivered is one HandlePublication call.
type delivered struct {
	pub *engine.Publication
	sp  engine.StreamPosition
}

// recorder is the handler of the package's own tests: it keeps
// publications per channel and lets tests wait for them.
type recorder struct {
	mu       sync.Mutex
	changed  chan struct{}
	pubs     map[string][]delivered
	controls [][]byte
}

func newRecorder() *recorder {
	return &recorder{changed: make(chan struct{}), pubs: make(map[string][]delivered)}
}

func (r *recorder) record(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) HandlePublication(ch string, pub *engine.Publication, sp engine.StreamPosition) {
	r.record(func() { r.pubs[ch] = append(r.pubs[ch], delivered{pub: pub, sp: sp}) })
}
func (r *recorder) HandleJoin(string, *engine.ClientInfo)  {}
func (r *recorder) HandleLeave(string, *engine.ClientInfo) {}
func (r *recorder) HandleControl(data []byte) {
	r.record(func() { r.controls = append(r.controls, data) })
}

func (r *recorder) get(ch string) []delivered {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivered(nil), r.pubs[ch]...)
}

// await waits until cond holds under the recorder's lock.
func (r *recorder) await(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ok, changed := cond(), r.changed
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

// awaitN waits for at least n publications on ch and returns them.
func (r *recorder) awaitN(t testing.TB, ch string, n int) []delivered {
	t.Helper()
	r.await(t, 30*time.Second, fmt.Sprintf("%d publications on %s", n, ch), func() bool { return len(r.pubs[ch]) >= n })
	return r.get(ch)
}

// checkOffsets fails unless ch's deliveries are exactly offsets 1..top in
// order, all in epoch.
func checkOffsets(t testing.TB, node string, got []delivered, top uint64, epoch string) {
	t.Helper()
	if uint64(len(got)) != top {
		t.Errorf("%s: %d deliveries, want %d", node, len(got), top)
	}
	for i, d := range got {
		if d.sp.Offset != uint64(i+1) || d.pub.Offset != d.sp.Offset || d.sp.Epoch != epoch {
			t.Fatalf("%s: delivery %d is offset %d (pub %d) epoch %q, want offset %d epoch %q",
				node, i, d.sp.Offset, d.pub.Offset, d.sp.Epoch, i+1, epoch)
		}
	}
}

// histogramCount returns how many observations h has.
func histogramCount(h interface{ Write(*dto.Metric) error }) float64 {
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		return 0
	}
	return float64(m.GetHistogram().GetSampleCount())
}
