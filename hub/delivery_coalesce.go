package hub

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Write coalescing (ClientConfig.WriteCoalesce, on unless
// WriteCoalesceOff). On a loopback or fast LAN the cost of delivering a
// small message is almost entirely the write system call (the kernel's TCP
// work, and on loopback the receiver's too), so a client that receives
// many messages a second is cheapest served by fewer, larger writes. A
// client is written at most once per interval: a message that arrives
// sooner after the previous write waits until the interval has passed and
// goes out with whatever else arrived meanwhile. A client that receives
// less than one message per interval never waits, nor does a reply to a
// command.
//
// The interval is the node's, not the connection's, and adapts to load, so
// that nobody has to pick one: a fixed interval that helps a saturated node
// (5 ms on the memory engine at 600 msg/s to 500 subscribers) only adds
// latency to one with CPU to spare (a Redis node at 200 msg/s). The hub
// measures the share of its CPUs (GOMAXPROCS) spent writing to sockets,
// per window of coalesceWindow: above coalesceGrowAbove the interval
// doubles (from coalesceMinStep, up to WriteCoalesce); below coalesceShrinkBelow it halves per window, down to
// zero, where every message is written at once as without coalescing. The
// two thresholds are more than a factor of two apart, so a doubling that
// halves a busy node's writes does not make it shrink straight back.
//
// Waiting clients are kept by one goroutine per hub in a FIFO rather than
// by a timer each: every client's due time is its last write plus nearly
// the same interval, so the queue is nearly sorted, and a fan-out that
// makes hundreds of clients due at once costs one wake-up instead of
// hundreds. When the interval shrinks, a client queued behind one queued
// earlier waits for it: at most the larger interval.

// The adaptive interval's constants. The thresholds are shares of
// GOMAXPROCS' time spent in writes. On the benchmarks' 2-core machine
// (docs/benchmarks.md, 500 subscribers, a write costing about 7 µs),
// 200 publications/s take about 30% of it in writes and are delivered well
// without coalescing (a fixed interval only added latency there on Redis),
// while 400/s take about 45% and without coalescing queue delivery behind
// the scheduler (p99 113 ms, 10.5 ms with 5 ms coalescing): growing past
// 40% tells the two apart.
//
// DefaultWriteCoalesce, the interval's bound, was chosen by measurement
// (docs/benchmarks.md, "Adaptive write coalescing, the default"): on the
// 2-core machine a 10 ms bound let the interval reach 10 ms at 200 msg/s,
// where the benchmark's own load client shares the CPUs, and made that row
// worse than without coalescing (first-copy p99 12.8 ms on memory, 13.7 on
// Redis); 4 ms kept it at 4.9 and 6.2 ms and every higher rate lower than
// 10 ms did, while 2 ms was too short to save the CPU that high rates need
// (memory at 1,500 msg/s: 163 ms against 13.4).
//
// The upper half of the bound is for a node whose writes merge many
// messages. At a low rate the interval delays messages without merging
// them: with heavy clients at 200 msg/s to 500 subscribers the interval
// sat at its bound and the first-copy p99 was 6.4-8.5 ms; held to half
// the bound there it was 3.6-4.4 ms (docs/benchmarks.md, "Half the bound
// unless writes merge"). At 1,000 msg/s on Redis, where each write
// carries several messages, the whole bound (and more: 8 ms did better
// than 4) kept every copy in time. So the interval passes half the bound
// only while a write carries at least coalesceMergeToPass messages on
// average, which a low rate never does.
const (
	DefaultWriteCoalesce = 4 * time.Millisecond
	coalesceMergeToPass  = 4
	coalesceMinStep      = 250 * time.Microsecond
	coalesceWindow       = 10 * time.Millisecond
	coalesceGrowAbove    = 0.40
	coalesceShrinkBelow  = 0.15
	// maxCountedWrite caps what one flush adds to the measured write time:
	// a write blocked on a client's full socket waits, it does not work,
	// and must not make the node look busy.
	maxCountedWrite = 2 * time.Millisecond
)

// coalescer holds clients whose flush waits for their interval to pass,
// and the node's current interval.
type coalescer struct {
	mu      sync.Mutex
	waiting []coalesced
	wake    chan struct{} // buffered 1: something was added to an empty queue

	interval atomic.Int64 // nanoseconds; 0: write at once
	winStart atomic.Int64 // h.mono() when the current window began
	busy     atomic.Int64 // nanoseconds spent writing in the current window
	flushes  atomic.Int64 // writes of queued messages in the current window
	messages atomic.Int64 // messages those writes carried
	procs    int          // GOMAXPROCS when the hub was made
}

type coalesced struct {
	c   *Client
	due int64 // h.mono() when the client may be written again
}

func (q *coalescer) init() {
	q.wake = make(chan struct{}, 1)
	q.procs = runtime.GOMAXPROCS(0)
}

// mono is a monotonic clock in nanoseconds since the hub was made, for
// intervals that must not jump with the wall clock.
func (h *Hub) mono() int64 { return int64(time.Since(h.started)) }

// writeInterval is the node's current write coalescing interval: zero
// while the node writes every message at once.
func (h *Hub) writeInterval() time.Duration {
	return time.Duration(h.coalesce.interval.Load())
}

// wrote counts a writer's flushes (its tally, delivery_tally.go: flushes
// writes of messages that took busy) and, once per window, sets the next
// interval. One writer a window does the update (the compare and swap on
// the window's start), without a lock or a goroutine of its own.
func (h *Hub) wrote(now int64, busy time.Duration, flushes, messages int64) {
	if h.client.WriteCoalesceOff {
		return
	}
	q := &h.coalesce
	q.busy.Add(int64(busy))
	q.flushes.Add(flushes)
	q.messages.Add(messages)
	start := q.winStart.Load()
	if now-start < int64(coalesceWindow) || !q.winStart.CompareAndSwap(start, now) {
		return
	}
	busy = time.Duration(q.busy.Swap(0))
	flushes, carried := q.flushes.Swap(0), q.messages.Swap(0)
	cur := time.Duration(q.interval.Load())
	next := nextInterval(cur, h.client.WriteCoalesce, busy, time.Duration(now-start), q.procs)
	q.interval.Store(int64(mergeGate(next, h.client.WriteCoalesce, flushes, carried)))
}

// mergeGate keeps the interval within half the bound unless the window's
// writes carried at least coalesceMergeToPass messages each on average:
// the upper half of the bound is for writes that merge (see the
// constants).
func mergeGate(next, limit time.Duration, flushes, messages int64) time.Duration {
	half := limit / 2
	if next <= half || (flushes > 0 && messages >= coalesceMergeToPass*flushes) {
		return next
	}
	return half
}

// nextInterval is the interval after a window of elapsed in which writes
// took busy on a node of procs CPUs. It stays within [0, limit].
//
// Clients waiting for a writer are not a signal of their own: a fan-out to
// more clients than there are writers makes them wait every time, however
// idle the node, and a node that is short of CPU shows it in the writes'
// time (a write that waits for a CPU takes longer).
func nextInterval(cur, limit, busy, elapsed time.Duration, procs int) time.Duration {
	if elapsed <= 0 || procs <= 0 {
		return cur
	}
	load := float64(busy) / (float64(elapsed) * float64(procs))
	switch {
	case load > coalesceGrowAbove:
		if cur < coalesceMinStep {
			return min(coalesceMinStep, limit)
		}
		return min(2*cur, limit)
	case load < coalesceShrinkBelow:
		// A long quiet spell (the update waits for the next write) counts
		// as that many quiet windows.
		for n := max(elapsed/coalesceWindow, 1); n > 0 && cur > 0; n-- {
			cur /= 2
			if cur < coalesceMinStep {
				cur = 0
			}
		}
		return cur
	}
	return min(cur, limit)
}

// coalesceLocked reports whether c's flush must wait for its write
// interval, and if so queues it (c.flushing is set by the caller and stays
// set, so nothing else schedules the client meanwhile).
func (c *Client) coalesceLocked() bool {
	// Not once shutdown has begun: the coalescer's goroutine is ending,
	// and a client queued after its last pass would never be written.
	// Nor when a reply waits: a command's round trip is a client waiting,
	// and replies come at the rate of the client's own commands; the
	// pushes queued with it share its frame.
	if c.hub.client.WriteCoalesceOff || c.replyQueued || c.lastWrite.Load() == 0 || c.state == stateClosed || c.hub.shutdown.Load() {
		return false
	}
	iv := c.hub.coalesce.interval.Load()
	if iv <= 0 {
		return false
	}
	due := c.lastWrite.Load() + iv
	if c.hub.mono() >= due {
		return false
	}
	q := &c.hub.coalesce
	q.mu.Lock()
	q.waiting = append(q.waiting, coalesced{c: c, due: due})
	first := len(q.waiting) == 1
	q.mu.Unlock()
	if first {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// coalesceLoop hands waiting clients to the writers when their interval has
// passed. Clients behind one that is not due yet wait with it: the queue is
// nearly sorted, so that costs them at most a fraction of the interval.
func (h *Hub) coalesceLoop() {
	defer h.wg.Done()
	q := &h.coalesce
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var due []coalesced
	for {
		q.mu.Lock()
		now := h.mono()
		n := 0
		for n < len(q.waiting) && q.waiting[n].due <= now {
			n++
		}
		due = append(due[:0], q.waiting[:n]...)
		rest := copy(q.waiting, q.waiting[n:])
		clear(q.waiting[rest:])
		q.waiting = q.waiting[:rest]
		var next int64
		if rest > 0 {
			next = q.waiting[0].due
		}
		q.mu.Unlock()

		hand := handoff{h: h}
		for _, w := range due {
			hand.give(w.c)
		}
		hand.flush()
		clear(due)

		if h.ctx.Err() != nil {
			// Shut down: write what still waits at once.
			q.mu.Lock()
			left := q.waiting
			q.waiting = nil
			q.mu.Unlock()
			for _, w := range left {
				w.c.handToWriter()
			}
			return
		}
		if next == 0 {
			select {
			case <-q.wake:
			case <-h.ctx.Done():
			}
			continue
		}
		timer.Reset(time.Duration(next - h.mono()))
		select {
		case <-timer.C:
		case <-h.ctx.Done():
		}
	}
}
