package hub

import "sync"

// Handing clients to the writer pool in shares. A fan-out readies every
// subscriber it queues a message for; handed over one by one, each took a
// send on the pool's queue, whose lock the fan-out and both writers take
// in turn from their CPUs, and a receive on a writer. A handoff gathers
// the clients one fan-out (or one pass of the coalescer) readies and
// hands them over handoffShare at a time, as the floor's writers take
// their share of a channel's subscribers (bench/floor): a writer takes a
// share with one receive and writes its clients in turn.
//
// A share holds only clients whose writes never hold the writer: with the
// pool's default (ClientConfig.WaitOnBlockedWrites off), a write that the
// socket does not take at once leaves the pool (frameWriter), when the
// transport can start one (WriteStarter). A client whose write may wait
// goes to the pool alone, as before, so that no client waits for
// another's socket behind it in a share.
//
// handoffShare is small beside a large fan-out (500 subscribers make 32
// shares, the first handed over after 16 clients' enqueues, a few
// microseconds) and large enough that the queue's operations are a
// sixteenth of what they were.
const handoffShare = 16

// readyShare is a share of clients, each readied for a writer (its
// flushing flag set): the writer that takes the share writes them in turn.
type readyShare struct {
	n int
	c [handoffShare]*Client
}

// writeJob is what the writer pool's queue holds: one client, or a share.
type writeJob struct {
	c     *Client
	share *readyShare
}

// shares recycles readyShares: one is in use per fan-out being gathered
// and per share queued or being written.
type shares struct{ pool sync.Pool }

func (s *shares) get() *readyShare {
	if r, ok := s.pool.Get().(*readyShare); ok {
		return r
	}
	return new(readyShare)
}

func (s *shares) put(r *readyShare) {
	clear(r.c[:r.n])
	r.n = 0
	s.pool.Put(r)
}

// handoff gathers the clients that one fan-out readies. A nil *handoff
// hands each client over at once.
type handoff struct {
	h     *Hub
	share *readyShare
}

// give hands c, whose flushing flag its caller set, to the writer pool:
// with b's share, or at once when b is nil or c's writes may wait.
func (b *handoff) give(c *Client) {
	if b == nil || b.h.client.WaitOnBlockedWrites {
		c.handToWriter()
		return
	}
	if _, ok := c.transport.(WriteStarter); !ok {
		c.handToWriter()
		return
	}
	if b.share == nil {
		b.share = b.h.shares.get()
	}
	b.share.c[b.share.n] = c
	b.share.n++
	if b.share.n == handoffShare {
		b.flush()
	}
}

// flush hands over what b has gathered. The fan-out calls it when it is
// done: until then, its last clients wait for it.
func (b *handoff) flush() {
	s := b.share
	if s == nil {
		return
	}
	b.share = nil
	b.h.handShare(s)
}

// handShare gives s to the writer pool, or, when the pool is backed up or
// stopped, each of its clients to a goroutine of its own (handToWriter).
func (h *Hub) handShare(s *readyShare) {
	if s.n == 1 {
		c := s.c[0]
		h.shares.put(s)
		c.handToWriter()
		return
	}
	if h.ctx.Err() == nil {
		select {
		case h.writeq <- writeJob{share: s}:
			return
		default:
		}
	}
	for _, c := range s.c[:s.n] {
		go c.flushLoop()
	}
	h.shares.put(s)
}

// flushShare writes the clients of s on a pool writer (writerLoop). When
// one's write leaves the pool (frameWriter.write), the goroutine is that
// client's from then on: the write hands the rest of the share back to
// the pool before it waits (handRest), and flushShare reports true.
func (h *Hub) flushShare(s *readyShare, w *frameWriter) (detached bool) {
	for i := 0; i < s.n; i++ {
		c := s.c[i]
		w.share, w.rest = s, i+1
		if c.flush(true, w) {
			return true
		}
		if w.tally.due() {
			h.settle(&w.tally)
		}
	}
	h.shares.put(s)
	return false
}

// handRest hands the clients of w's share that it has not written yet
// back to the pool: w's write is leaving the pool to wait for its
// client's socket, and they must not wait with it.
func (w *frameWriter) handRest(h *Hub) {
	s := w.share
	if s == nil {
		return
	}
	w.share = nil
	n := copy(s.c[:], s.c[w.rest:s.n])
	clear(s.c[n:s.n])
	s.n = n
	if n == 0 {
		h.shares.put(s)
		return
	}
	h.handShare(s)
}
