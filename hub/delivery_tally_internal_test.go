package hub

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestQueueHistogramMatchesPrometheus: herald_client_queue_bytes, counted
// in writers' tallies, reads as the prometheus.Histogram it replaced
// (buckets of 64 bytes to 4 MiB by fours) with the same observations,
// bucket edges included.
func TestQueueHistogramMatchesPrometheus(t *testing.T) {
	sizes := []int{0, 1, 63, 64, 65, 255, 256, 257, 5000, 65536, 4194304, 4194305, 1 << 30}
	ref := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ref", Buckets: prometheus.ExponentialBuckets(64, 4, 9)})
	q := newQueueHistogram()
	// Two tallies, as two writers would hand them over.
	var a, b writerTally
	for i, n := range sizes {
		ref.Observe(float64(n))
		tl := &a
		if i%2 == 1 {
			tl = &b
		}
		tl.flushed(1, n, n, int64(i+1))
	}
	q.add(&a)
	q.add(&b)

	var want, got dto.Metric
	if err := ref.Write(&want); err != nil {
		t.Fatal(err)
	}
	ch := make(chan prometheus.Metric, 1)
	q.Collect(ch)
	if err := (<-ch).Write(&got); err != nil {
		t.Fatal(err)
	}
	wh, gh := want.GetHistogram(), got.GetHistogram()
	if gh.GetSampleCount() != wh.GetSampleCount() || gh.GetSampleSum() != wh.GetSampleSum() {
		t.Fatalf("count %d sum %v, want %d %v", gh.GetSampleCount(), gh.GetSampleSum(), wh.GetSampleCount(), wh.GetSampleSum())
	}
	if len(gh.GetBucket()) != len(wh.GetBucket()) {
		t.Fatalf("%d buckets, want %d", len(gh.GetBucket()), len(wh.GetBucket()))
	}
	for i, w := range wh.GetBucket() {
		g := gh.GetBucket()[i]
		if g.GetUpperBound() != w.GetUpperBound() || g.GetCumulativeCount() != w.GetCumulativeCount() {
			t.Errorf("bucket %d: le %v count %d, want le %v count %d", i, g.GetUpperBound(), g.GetCumulativeCount(), w.GetUpperBound(), w.GetCumulativeCount())
		}
	}
}

// TestWriterTallyBounds: a writer hands its tally over after tallyFlushes
// flushes or tallyBytes written bytes, whichever comes first, so what the
// node's queued count overstates stays bounded on a writer that never
// runs out of work; and handing it over takes the written bytes from the
// node's count and adds the frames to the metrics.
func TestWriterTallyBounds(t *testing.T) {
	var tl writerTally
	for range tallyFlushes - 1 {
		tl.flushed(1, 100, 100, 1)
	}
	if tl.due() {
		t.Fatalf("due after %d flushes of 100 bytes", tallyFlushes-1)
	}
	tl.flushed(1, 100, 100, 1)
	if !tl.due() {
		t.Fatalf("not due after %d flushes", tallyFlushes)
	}
	var big writerTally
	big.flushed(1, tallyBytes, tallyBytes, 1)
	if !big.due() {
		t.Fatalf("not due after %d bytes", tallyBytes)
	}

	h := &Hub{}
	h.client.WriteCoalesceOff = true
	h.metrics = newMetrics(h)
	h.queuedTotal.Store(int64(tallyFlushes*100) + 7)
	tl.frames, tl.bytes = 3, 300
	h.settle(&tl)
	if q := h.queuedTotal.Load(); q != 7 {
		t.Errorf("node's queued count %d after the tally, want 7", q)
	}
	var m dto.Metric
	if err := h.metrics.framesOut.Write(&m); err != nil || m.GetCounter().GetValue() != 3 {
		t.Errorf("frames %v (%v), want 3", m.GetCounter().GetValue(), err)
	}
	if tl != (writerTally{}) {
		t.Errorf("the tally was not emptied: %+v", tl)
	}
}

// TestWriterTallyBusy: a flush's time runs from its start to the next
// one's, or to the hand-over, and counts at most maxCountedWrite (a write
// that waited for a client's socket did no work for the rest).
func TestWriterTallyBusy(t *testing.T) {
	var tl writerTally
	tl.flushed(1, 10, 10, 1000)
	tl.flushed(1, 10, 10, 3000)
	if tl.busy != 2000 {
		t.Fatalf("busy %v after flushes at 1000 and 3000 ns, want 2µs", tl.busy)
	}
	tl.flushed(1, 10, 10, 3000+int64(time.Second))
	if want := 2000 + maxCountedWrite; tl.busy != want {
		t.Fatalf("busy %v after a flush of a second, want %v", tl.busy, want)
	}
	tl.closeFlush(3000 + int64(time.Second) + 500)
	if want := 2500 + maxCountedWrite; tl.busy != want || tl.mark != 0 {
		t.Fatalf("busy %v mark %d after closing the last flush, want %v and 0", tl.busy, tl.mark, want)
	}
	tl.closeFlush(int64(2 * time.Second))
	if want := 2500 + maxCountedWrite; tl.busy != want {
		t.Fatalf("closing with no flush open counted time: busy %v", tl.busy)
	}
}
