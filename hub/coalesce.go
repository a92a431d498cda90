package hub

import (
	"sync"
	"time"
)

// Write coalescing (ClientConfig.WriteCoalesce). On a loopback or fast LAN
// the cost of delivering a small message is almost entirely the write
// system call (the kernel's TCP work, and on loopback the receiver's too),
// so a client that receives many messages a second is cheapest served by
// fewer, larger writes. With coalescing on, a client is written at most
// once per interval: a message that arrives sooner after the previous write
// waits until the interval has passed and goes out with whatever else
// arrived meanwhile. A client that receives less than one message per
// interval never waits.
//
// Waiting clients are kept by one goroutine per hub in a FIFO rather than
// by a timer each: every client's due time is its last write plus the same
// interval, so the queue is nearly sorted, and a fan-out that makes
// hundreds of clients due at once costs one wake-up instead of hundreds.

// coalescer holds clients whose flush waits for their interval to pass.
type coalescer struct {
	mu      sync.Mutex
	waiting []coalesced
	wake    chan struct{} // buffered 1: something was added to an empty queue
}

type coalesced struct {
	c   *Client
	due int64 // h.mono() when the client may be written again
}

func (q *coalescer) init() { q.wake = make(chan struct{}, 1) }

// mono is a monotonic clock in nanoseconds since the hub was made, for
// intervals that must not jump with the wall clock.
func (h *Hub) mono() int64 { return int64(time.Since(h.started)) }

// coalesceLocked reports whether c's flush must wait for its write
// interval, and if so queues it (c.flushing is set by the caller and stays
// set, so nothing else schedules the client meanwhile).
func (c *Client) coalesceLocked() bool {
	iv := c.hub.client.WriteCoalesce
	// Not once shutdown has begun: the coalescer's goroutine is ending,
	// and a client queued after its last pass would never be written.
	if iv <= 0 || c.lastWrite == 0 || c.state == stateClosed || c.hub.shutdown.Load() {
		return false
	}
	due := c.lastWrite + int64(iv)
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

		for _, w := range due {
			w.c.handToWriter()
		}
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
