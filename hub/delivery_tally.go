package hub

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// writerTally is what one writer's flushes add to the node's shared counts:
// the write metrics, the coalescer's window (delivery_coalesce.go) and the
// bytes the node's queued count (Hub.queuedTotal) still holds for what
// was written. The writer adds them up itself and hands them over
// (Hub.settle) when it has nothing more to write, and at the latest every
// tallyFlushes flushes or tallyBytes written bytes.
//
// Counted per flush, each was an atomic add to a line that the node's
// other writer and its fan-out write too, so it waited for the line to
// come from the other CPU: on a node at 200 msg/s to 500 subscribers the
// add to the queued count was a third of flush's own samples, and the
// write metrics and the coalescer's counts as much again (perf record,
// docs/benchmarks.md).
type writerTally struct {
	flushes, messages int64
	frames, bytes     int64
	// busy is the time the flushes took: each one's, up to
	// maxCountedWrite, from its start to the next one's (mark), or to
	// the hand-over for the last, so that a flush reads the clock once.
	busy time.Duration
	mark int64 // hub.mono() when the last flush began; 0: none open
	// written is the bytes taken from clients' queues and written, which
	// the node's queued count holds until they are handed over.
	written int64
	// queue is the herald_client_queue_bytes observations: a count per
	// bucket of queueBytesBounds (the last for larger) and their sum.
	queue    [len(queueBytesBounds) + 1]uint64
	queueSum float64
}

// The bounds of a tally: what the node's queued count may overstate, per
// writer, is at most tallyBytes (plus one flush).
const (
	tallyFlushes = 32
	tallyBytes   = 64 << 10
)

// queueBytesBounds are herald_client_queue_bytes' buckets: 64 bytes to
// 4 MiB, by fours.
var queueBytesBounds = [...]float64{64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304}

// flushed counts one flush, begun at start (hub.mono()), of messages,
// queued bytes when the writer took them, of which the node's count still
// holds written.
func (t *writerTally) flushed(messages, queued, written int, start int64) {
	t.closeFlush(start)
	t.mark = start
	t.flushes++
	t.messages += int64(messages)
	t.written += int64(written)
	i := 0
	for i < len(queueBytesBounds) && float64(queued) > queueBytesBounds[i] {
		i++
	}
	t.queue[i]++
	t.queueSum += float64(queued)
}

// closeFlush counts the time of the flush still open, if any, as ending
// at now. A write that waits for a client's socket waits, it does not
// work: no flush counts more than maxCountedWrite.
func (t *writerTally) closeFlush(now int64) {
	if t.mark != 0 {
		t.busy += min(time.Duration(now-t.mark), maxCountedWrite)
		t.mark = 0
	}
}

// due reports whether the tally has reached one of its bounds.
func (t *writerTally) due() bool {
	return t.flushes >= tallyFlushes || t.written >= tallyBytes
}

// settle hands a writer's tally over to the node's counts and empties it.
func (h *Hub) settle(t *writerTally) {
	if t.flushes == 0 && t.frames == 0 {
		return
	}
	h.queuedTotal.Add(-t.written)
	m := h.metrics
	m.bytesOut.Add(float64(t.bytes))
	m.framesOut.Add(float64(t.frames))
	m.queueBytes.add(t)
	if t.flushes > 0 {
		now := h.mono()
		t.closeFlush(now)
		h.wrote(now, t.busy, t.flushes, t.messages)
	}
	*t = writerTally{}
}

// queueHistogram is herald_client_queue_bytes, a histogram of the bytes
// waiting in a client's queue when its writer takes them. It is a
// collector of its own rather than a prometheus.Histogram because its
// observations come in tallies (writerTally), which that one cannot add.
type queueHistogram struct {
	desc   *prometheus.Desc
	mu     sync.Mutex
	counts [len(queueBytesBounds) + 1]uint64
	sum    float64
}

func newQueueHistogram() *queueHistogram {
	return &queueHistogram{desc: prometheus.NewDesc("herald_client_queue_bytes",
		"Bytes waiting in a client's queue when its writer takes them.", nil, nil)}
}

func (q *queueHistogram) add(t *writerTally) {
	q.mu.Lock()
	for i, n := range t.queue {
		q.counts[i] += n
	}
	q.sum += t.queueSum
	q.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (q *queueHistogram) Describe(ch chan<- *prometheus.Desc) { ch <- q.desc }

// Collect implements prometheus.Collector.
func (q *queueHistogram) Collect(ch chan<- prometheus.Metric) {
	buckets := make(map[float64]uint64, len(queueBytesBounds))
	q.mu.Lock()
	var n uint64
	for i, b := range queueBytesBounds {
		n += q.counts[i]
		buckets[b] = n
	}
	n += q.counts[len(queueBytesBounds)]
	sum := q.sum
	q.mu.Unlock()
	ch <- prometheus.MustNewConstHistogram(q.desc, n, sum, buckets)
}
