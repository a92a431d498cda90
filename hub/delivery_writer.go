package hub

import (
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/hub/internal/writequeue"
	"github.com/heraldhq/herald/protocol"
)

// The writer pool, and a queue long enough to take a large fan-out at
// once; past it, clients get a goroutine of their own.
//
// A write that the socket does not take at once leaves the pool
// (frameWriter), so by default the pool's writers only ever do CPU work,
// and one per CPU keeps every CPU writing. More writers only add
// wake-ups: a fan-out readies a parked writer for each client it hands
// over until none is parked, each taking a CPU from the writers already
// running (and from the clients beside the node). Measured on 2 cores
// with heavy clients (docs/benchmarks.md, "Two writers instead of 64"),
// 2 writers instead of 64 lowered the median first-copy p99 by 8-22% at
// 8 of 10 rates (within 5% at the other two), and the node's CPU by 0-3
// points. With ClientConfig.WaitOnBlockedWrites a writer waits for a
// client's full socket (up to the write timeout), and the pool keeps
// blockingWriters so that a few such clients do not hold up the rest.
const (
	minWriters      = 2
	blockingWriters = 64
	writeQueueLen   = 16384
)

// poolWriters is the writer pool's size: blockingWriters (or one per CPU,
// when there are more) when writes wait for full sockets, else one per
// CPU (procs, GOMAXPROCS when the hub is made), at least minWriters, so
// that a write that waits briefly (a Transport without WriteStarter,
// whose WriteFrame must not wait long) does not stop delivery.
func poolWriters(waitOnBlocked bool, procs int) int {
	if waitOnBlocked {
		return max(blockingWriters, procs)
	}
	return max(minWriters, procs)
}

// queued is an encoded message waiting in a client's queue; its Sub is the
// delta subscription it belongs to (hub/internal/writequeue).
type queued = writequeue.Item[*subscription]

// writeQueue is the client's write side: encoded messages waiting to be
// written, whether a writer is flushing them, and the close that follows
// them. processing holds writes back while commands run, since holdSince
// until holdUntil (Unix nanoseconds) at the latest (command_exec.go).
type writeQueue struct {
	queue []queued
	// queued is the bytes of queue, and of a frame whose write waits
	// for the client's socket on a goroutine of the client's own
	// (frameWriter.write).
	queued       int
	pendingClose *Disconnect
	holdUntil    int64
	holdSince    int64
	// lastWrite is hub.mono() when the last frame's write began
	// (delivery_coalesce.go, and slow-client detection). A flush writes the queue in
	// frames of at most writequeue.MaxFrameBytes; a socket that drains completes each
	// frame in turn, so only a frame that has waited long says the client is
	// not reading (slowLocked). Atomic: the writer sets it between frames
	// without the client's lock.
	lastWrite atomic.Int64
	// delivered is what DeliveryReporter last said the client had taken,
	// first seen at deliveredAt and asked at deliveryAsked (hub.mono()).
	delivered     uint64
	deliveredAt   int64
	deliveryAsked int64
	flushing      bool
	processing    bool
	slow          bool // over the queue limit: closing, nothing more is queued
	writing       bool // a write to the transport is in progress, since lastWrite
	detached      bool // that write waits for the socket on a goroutine of the client's own (frameWriter.write)
	droppable     bool // the queue may hold droppable messages (QueueDropOldest)
	replyQueued   bool // the queue holds a reply to a command: no coalescing wait
	// pongBehind: the pong deadline was moved because the client was
	// behind in taking what was written to it (lifecycle_pong.go). Here
	// among the other flags, where it costs the Client no bytes.
	pongBehind bool
}

// enqueueLocked queues an encoded message. Messages queued while the
// client runs commands are written together when they are done (command_exec.go),
// so replies and the pushes they cause share one frame.
func (c *Client) enqueueLocked(msg []byte) { c.enqueueMsgLocked(msg, false) }

// enqueueMsgLocked queues msg; past QueueMaxSize it makes room by dropping
// the oldest droppable publications, or else closes the client with 3008
// if it is slow (slowLocked).
func (c *Client) enqueueMsgLocked(msg []byte, droppable bool) {
	c.enqueueQueuedLocked(queued{Msg: msg, Droppable: droppable}, nil)
}

// enqueueQueuedLocked queues q and readies the client for a writer:
// through hand, the fan-out's (nil: at once).
func (c *Client) enqueueQueuedLocked(q queued, hand *handoff) {
	if c.state == stateClosed || c.slow {
		return
	}
	if c.queue == nil {
		c.queue = c.hub.queueArrays.New()
	}
	c.queue = append(c.queue, q)
	c.queued += len(q.Msg)
	c.droppable = c.droppable || q.Droppable
	if limit := c.hub.client.QueueMaxSize; c.queued > limit {
		c.overLimitLocked(limit, c.queued-len(q.Msg), hand)
		return
	}
	c.hub.queuedTotal.Add(int64(len(q.Msg)))
	c.scheduleFlushVia(hand)
}

// overLimitLocked handles a queue that an enqueue took past limit, from
// before bytes: it drops what it may (QueueDropOldest), and closes the
// client if it is slow; else it schedules the flush. The node's count
// takes what the queue gained or lost.
func (c *Client) overLimitLocked(limit, before int, hand *handoff) {
	defer func() { c.hub.queuedTotal.Add(int64(c.queued - before)) }()
	over := c.queued
	if c.droppable {
		if dropped := c.dropOldestLocked(limit); dropped > 0 {
			c.hub.metrics.dropped.Add(float64(dropped))
			if c.queued <= limit {
				c.backpressure(BackpressureEvent{QueuedBytes: over, Limit: limit, Dropped: dropped})
			}
		}
	}
	var why string
	if c.queued > limit {
		why = c.slowLocked(limit)
	}
	if why != "" {
		c.logger().Info("client too slow: write queue over the limit", "why", why, "queued_bytes", c.queued, "limit", limit)
		c.queue, c.queued = nil, 0
		c.slow = true // nothing more is queued; the close follows
		c.backpressure(BackpressureEvent{QueuedBytes: over, Limit: limit, Closed: true})
		go c.close(newDisconnect(protocol.DisconnectSlow))
		return
	}
	c.scheduleFlushVia(hand)
}

// Slow-client detection. A queue over QueueMaxSize alone does not make a
// client slow: when the node itself is behind (its CPUs busy, its writers
// queued), every client's queue grows, also of those whose sockets take
// every byte at once, and closing them would punish clients for the
// node's slowness (they reconnect, resubscribe and recover: more load). A
// client is slow when its queue is over the limit and its socket does not
// drain: the write of one frame (at most writequeue.MaxFrameBytes, or one larger
// message) to it has been blocked for slowWriteStall (a socket that drains
// completes a write at once; only a full socket buffer makes a write wait).
// It is the frame's time that counts, not the whole flush's: a client that
// reads steadily but is behind takes a long queue in many frames, each of
// which completes.
//
// A blocked write is not proof enough where the transport can count what
// the client takes (DeliveryReporter): a full send buffer wakes its writer
// only once a good part of it has drained, and a node whose CPUs are busy
// runs the woken writer late, so a write can wait for a second while its
// client reads hundreds of kilobytes. There the client is slow when it has
// taken nothing for slowWriteStall while a write waits.
//
// A client whose writes complete keeps its queue: NodeQueueMaxSize sheds
// publishing on this node before the queues grow much past it
// (command_publish.go). Publications from other nodes cannot be shed here, so when
// the node's queues pass twice NodeQueueMaxSize, a client whose queue is
// over overloadQueueFactor times QueueMaxSize is closed as well: the node
// bounds its memory with the clients that hold most of it. And a client
// that reads, but slower than its channels publish, is closed once its
// queue passes slowQueueFactor times QueueMaxSize, whatever the node's
// state: far more than a busy node leaves with any one client, which it
// cannot hold for ever.
const (
	slowWriteStall      = 500 * time.Millisecond
	detachedWriteStall  = 4 * slowWriteStall
	overloadQueueFactor = 4
	slowQueueFactor     = 16
	// deliveryAskEvery spaces the kernel queries (a system call each)
	// of a client whose queue is over the limit and grows with every
	// publication.
	deliveryAskEvery = 10 * time.Millisecond
)

// slowLocked reports why a client whose queue is over limit is to be
// closed as slow, or "" when it is not: the reason goes to the log, which
// is how an operator (and the test command's overload step) tells a
// stopped reader from a slow one or from a node over its bound.
func (c *Client) slowLocked(limit int) string {
	if c.queued > slowQueueFactor*limit {
		return "reads slower than its channels publish (queue over 16 times the limit)"
	}
	if c.writing {
		now := c.hub.mono()
		if since := c.lastWrite.Load(); now-since >= int64(slowWriteStall) && !c.takingLocked(now, since, c.stallLocked()) {
			return "took nothing while a write waited"
		}
	}
	node := c.hub.client.NodeQueueMaxSize
	if node >= 0 && c.queued > overloadQueueFactor*limit && c.hub.queuedTotal.Load() > 2*int64(node) {
		return "holds over 4 times the limit while the node's queues are over twice client.node_queue_max_size"
	}
	return ""
}

// stallLocked is how long a client whose write waits may take no bytes
// before it counts as not reading. A write that holds one of the pool's
// writers gets slowWriteStall. A detached write holds no writer, only the
// client's own bytes (which the queue bounds limit), so where the
// transport counts what the client takes it gets detachedWriteStall: a
// client that reads but whose process gets no CPU for a while (the load
// tool of bench/overload.sh at twice the node's capacity) pauses past
// 500 ms, and 3 of 500 reading subscribers were closed as slow with
// writes detached. A transport whose own write timeout is longer
// (WriteProgressBounder) sets the stall: its operator chose how long a
// client may take nothing. That timeout, which also judges by what the
// client takes, still cuts one that stopped reading.
func (c *Client) stallLocked() time.Duration {
	if c.detached {
		if _, ok := c.transport.(DeliveryReporter); ok {
			if b, ok := c.transport.(WriteProgressBounder); ok {
				return max(detachedWriteStall, b.WriteProgressTimeout())
			}
			return detachedWriteStall
		}
	}
	return slowWriteStall
}

// takingLocked reports whether a client whose write has waited since
// `since` took bytes within the last stall, as far as its transport can
// tell (false when it cannot).
func (c *Client) takingLocked(now, since int64, stall time.Duration) bool {
	r, ok := c.transport.(DeliveryReporter)
	if !ok {
		return false
	}
	if now-c.deliveryAsked >= int64(deliveryAskEvery) {
		n, known := r.Delivered()
		if !known {
			return false
		}
		c.deliveryAsked = now
		if n != c.delivered || c.deliveredAt == 0 {
			c.delivered, c.deliveredAt = n, now
		}
	}
	return now-max(c.deliveredAt, since) < int64(stall)
}

// dropOldestLocked removes droppable messages, oldest first, until the
// queue is within limit (and the deltas that lost their base with them),
// and returns how many it removed. A subscription whose delta chain is
// still broken gets its next publication in full.
func (c *Client) dropOldestLocked(limit int) int {
	var dropped int
	var broken map[*subscription]bool
	c.queue, c.queued, dropped, broken, c.droppable = writequeue.DropOldest(c.queue, c.queued, limit)
	for s := range broken {
		s.deltaHave = deltaRef{}
	}
	return dropped
}

// backpressure tells the application's OnBackpressure, on a goroutine of
// its own: it is called under the client's lock.
func (c *Client) backpressure(ev BackpressureEvent) {
	if fn := c.hub.cfg.Handlers.OnBackpressure; fn != nil {
		go fn(c, ev)
	}
}

// scheduleFlushLocked hands the client to a writer if messages are
// waiting and none is writing them: to the hub's writer pool, or, when the
// pool is backed up (or stopped), to a goroutine of its own, so that
// fan-out never waits for a writer.
func (c *Client) scheduleFlushLocked() { c.scheduleFlushVia(nil) }

// scheduleFlushVia is scheduleFlushLocked that hands the client over
// through hand, a fan-out's (delivery_handoff.go).
func (c *Client) scheduleFlushVia(hand *handoff) {
	if c.flushing || len(c.queue) == 0 {
		return
	}
	if c.processing {
		c.holdLocked()
		return
	}
	c.flushing = true
	if c.coalesceLocked() {
		return
	}
	hand.give(c)
}

// handToWriter gives a client whose flushing flag its caller set to a writer
// of the pool, or to a goroutine of its own when the pool is backed up or
// stopped.
func (c *Client) handToWriter() {
	if c.hub.ctx.Err() == nil {
		select {
		case c.hub.writeq <- writeJob{c: c}:
			return
		default:
		}
	}
	go c.flushLoop()
}

// writerLoop is one of the hub's writers: it writes the queues of the
// clients handed to it, alone or in shares (delivery_handoff.go). While a
// client waits for a writer, its messages accumulate and go out together,
// so a busy node makes fewer, larger writes. On shutdown it writes what is
// still handed over, then exits.
func (h *Hub) writerLoop() {
	defer h.wg.Done()
	w := newFrameWriter()
	t := &w.tally
	defer h.settle(t)
	for {
		job, ok := h.nextJob(t)
		if !ok {
			return
		}
		if job.share != nil {
			if h.flushShare(job.share, w) {
				return // a writer took this one's place (frameWriter.write)
			}
			continue
		}
		if job.c.flush(true, w) {
			return
		}
		if t.due() {
			h.settle(t)
		}
	}
}

// nextJob is the next client or share handed to a writer whose tally is
// t: one waiting, else, once the tally is handed over (nothing waits, so
// the writer parks), the next one to come. It reports false when the hub
// is stopping and none waits: on shutdown a writer takes what is still
// handed over, then exits.
func (h *Hub) nextJob(t *writerTally) (writeJob, bool) {
	select {
	case j := <-h.writeq:
		return j, true
	default:
	}
	h.settle(t)
	select {
	case j := <-h.writeq:
		return j, true
	case <-h.ctx.Done():
	}
	// Stopping. A job handed over just before the stop makes both cases
	// ready, and select picks one at random: look once more, so it is
	// written rather than left in the queue.
	select {
	case j := <-h.writeq:
		return j, true
	default:
		return writeJob{}, false
	}
}

// replaceWriter starts a writer in the place of one that leaves the pool
// to finish one client's write.
func (h *Hub) replaceWriter() {
	h.wg.Add(1)
	go h.writerLoop()
}

// flushLoop writes queued messages, batched into frames, until the queue is
// empty; then it closes the transport if a close is pending. It runs on a
// goroutine of the client's own.
func (c *Client) flushLoop() {
	w := newFrameWriter()
	c.flush(false, w)
	c.hub.settle(&w.tally)
}

// flush is flushLoop on a pool writer (pooled) or a goroutine of the
// client's own, writing with that goroutine's frame writer fw and
// counting in its tally. It reports whether a pool writer left the pool
// to wait for this client's socket (frameWriter.write): the caller's
// goroutine then belongs to no pool and ends.
func (c *Client) flush(pooled bool, fw *frameWriter) (detached bool) {
	f := writequeue.NewFramer()
	defer f.Release()
	fw.c, fw.pooled = c, pooled
	if !c.hub.client.WaitOnBlockedWrites {
		fw.starter, _ = c.transport.(WriteStarter)
	}
	defer func() {
		detached = fw.detached
		fw.done()
	}()
	t := &fw.tally
	wrote := false
	for {
		c.mu.Lock()
		c.writing = false // the previous write, if any, is done
		if wrote && len(c.queue) > 0 && c.coalesceLocked() {
			// More arrived during the write: it waits for the interval
			// (flushing stays set; the coalescer hands the client back).
			c.mu.Unlock()
			return
		}
		if c.processing && c.state != stateClosed {
			// A frame of commands is being handled: leave its replies and
			// pushes to the flush that HandleFrame starts when it is done,
			// so that they share one frame. What waits here may have been
			// queued while this writer was on its way (flushing set, so
			// no hold was armed): scheduling it again arms the hold that
			// bounds the wait, so a long command does not keep it until
			// the command ends.
			c.flushing = false
			c.scheduleFlushLocked()
			c.mu.Unlock()
			return
		}
		q, queued := c.queue, c.queued
		if len(q) > 0 {
			// The bytes leave the client's queue but stay in the node's
			// count until written (inFlight), and then until the tally is
			// handed over: taken out now, a reply admitted while they are
			// encoded would see the node lower than it is
			// (replyadmission.go).
			fw.inFlight = queued
		}
		c.queue, c.queued, c.droppable, c.replyQueued = nil, 0, false, false
		if len(q) == 0 {
			c.flushing = false
			d := c.pendingClose
			c.pendingClose = nil
			c.mu.Unlock()
			if d != nil {
				c.transport.Close(d.Code, d.Reason)
			}
			return
		}
		start := c.hub.mono()
		c.writing = true
		c.lastWrite.Store(start)
		fw.stamped = true
		c.mu.Unlock()
		wrote = true
		err := writequeue.Frames(&f, c.proto, q, fw.fn)
		// What is left in flight is the tally's to take from the node's
		// count; a detached write moved its share to the client's queue
		// (frameWriter.write).
		t.flushed(len(q), queued, fw.inFlight, start)
		fw.inFlight = 0
		c.hub.queueArrays.Recycle(q)
		if err != nil {
			c.mu.Lock()
			c.flushing, c.writing = false, false
			c.hub.queuedTotal.Add(-int64(c.queued))
			c.queue, c.queued, c.droppable = nil, 0, false
			// A client found slow is being closed with 3008 by a close
			// that may not have run yet (enqueueQueuedLocked starts it on
			// a goroutine): the write it ends is no write error, and that
			// close, finding no write in progress, closes the transport.
			closing := c.state == stateClosed || c.slow
			d := c.pendingClose
			c.mu.Unlock()
			if closing {
				if d != nil {
					c.transport.Close(d.Code, d.Reason)
				}
				return
			}
			c.logger().Debug("write failed", "error", err)
			c.close(newDisconnect(protocol.DisconnectWriteError))
			return
		}
	}
}

// frameWriter writes the frames of one client's flush. On a pool writer
// (pooled) whose client's transport can start a write without waiting
// (WriteStarter), a frame that the socket does not take at once does not
// hold the writer: a new writer takes its place in the pool, and this
// goroutine, now the client's own, waits for the rest of the frame and
// writes the rest of the client's queue. So no client waits for another's
// socket, and a goroutine is spent only on a client whose socket is full;
// an idle client costs nothing more. A transport without WriteStarter
// is written on the pool's writers as it always was.
type frameWriter struct {
	c        *Client
	starter  WriteStarter
	pooled   bool
	detached bool
	// stamped: lastWrite already holds when this frame's write began (the
	// flush stamped it just before its first frame), so write need not
	// read the clock again. Clock readings were a quarter of the writers'
	// own work around the write system call (server's
	// BenchmarkFanoutLoopback profile: 0.20 of 0.86 s; 0.11 s without
	// this one).
	stamped bool
	// inFlight is what is left of the bytes the flush took from the
	// client's queue and still counts in the node's (Hub.queuedTotal)
	// until they are written; a frame whose write waits moves its share
	// to the client's queue.
	inFlight int
	// share is the share this flush's client came in, if any, and rest
	// the index of its first client not yet written: a write that
	// leaves the pool hands them back (handRest).
	share *readyShare
	rest  int
	tally writerTally        // the writer goroutine's (delivery_tally.go)
	fn    func([]byte) error // write, bound once: a flush allocates nothing for it
}

// newFrameWriter is a writer goroutine's frameWriter, which it keeps for
// every flush it makes: its bound write would otherwise cost a flush two
// allocations, or a pool's round trip.
func newFrameWriter() *frameWriter {
	w := &frameWriter{}
	w.fn = w.write
	return w
}

// done ends a flush: the next may be another client's. Only the bound
// write and the tally stay.
func (w *frameWriter) done() { *w = frameWriter{fn: w.fn, tally: w.tally} }

func (w *frameWriter) write(frame []byte) error {
	c := w.c
	if w.stamped {
		w.stamped = false
	} else {
		c.lastWrite.Store(c.hub.mono())
	}
	w.tally.frames++
	w.tally.bytes += int64(len(frame))
	if w.starter == nil {
		return c.transport.WriteFrame(frame)
	}
	done, err := w.starter.StartFrame(frame)
	if done || err != nil {
		return err
	}
	if w.pooled {
		w.pooled, w.detached = false, true
		c.hub.replaceWriter()
		w.handRest(c.hub)
	}
	c.hub.metrics.writesDetached.Inc()
	// While it waits, the frame counts with the client's queue (and the
	// node's), against their bounds: what a client that does not read
	// holds is what it has pending, written or queued.
	// The node already counts the frame's messages (inFlight): only what
	// framing added is new to it.
	moved := min(len(frame), w.inFlight)
	w.inFlight -= moved
	c.mu.Lock()
	c.queued += len(frame)
	c.detached = true
	c.mu.Unlock()
	c.hub.queuedTotal.Add(int64(len(frame) - moved))
	err = w.starter.FinishFrame(frame)
	c.mu.Lock()
	c.detached = false
	// A close for slowness may have emptied the count meanwhile.
	was := c.queued
	c.queued = max(0, c.queued-len(frame))
	c.hub.queuedTotal.Add(int64(c.queued - was))
	c.mu.Unlock()
	return err
}

// enqueueDeltaLocked queues a publication for a delta subscription: the
// delta when the client holds its base, else the full one. The queue keeps
// which it is, so that dropping one (QueueDropOldest) also drops the
// deltas built on it (delivery_writer.go).
func (c *Client) enqueueDeltaLocked(s *subscription, p bufferedPub, hand *handoff) {
	msg, isDelta := p.msg, false
	if p.diff != nil && s.deltaHave.valid() && (p.keyed || s.deltaHave == p.base) {
		msg, isDelta = p.diff, true
	}
	if !p.keyed { // a map subscription keeps mapDeltaIntact until it breaks
		s.deltaHave = p.ref
	}
	c.enqueueQueuedLocked(queued{Msg: msg, Droppable: s.rule.QueuePolicy == QueueDropOldest, Sub: s, Delta: isDelta}, hand)
}
