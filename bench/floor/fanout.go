package main

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// errBacklog refuses a publication while a writer has more than
// maxPending bytes waiting: the subscribers do not keep up, and the floor
// does not buffer without bound.
var errBacklog = errors.New("a writer's backlog is full")

// conn is one client connection.
type conn struct {
	nc    net.Conn
	proto protocol.Type
	dead  atomic.Bool // a write failed or the reader ended; writers skip it
}

// kill marks c dead and closes its socket (which ends its reader).
func (c *conn) kill() {
	if c.dead.CompareAndSwap(false, true) {
		_ = c.nc.Close()
	}
}

// channel is one channel's subscribers, split over writers.
type channel struct {
	writers []*writer
	next    atomic.Uint32
	// ready is closed once the channel can take subscribers: at once, or
	// with -redis once Redis confirmed the node's subscription (err says
	// whether it did).
	ready chan struct{}
	err   error
}

// writerOptions are the floor's settings for each writer (Config).
type writerOptions struct {
	maxPending    int
	writeTimeout  time.Duration
	roundInterval time.Duration
}

// writer owns a share of a channel's subscriber sockets and writes to them
// from its goroutine.
type writer struct {
	writerOptions
	wake  chan struct{} // capacity 1: "something is pending"
	stats *stats

	mu      sync.Mutex
	subs    []*conn
	perFmt  [len(formats)]int    // live subscribers per format, to skip unused encodings
	pending [len(formats)][]byte // complete frames not yet written, per format
}

func newChannel(n int, o writerOptions, st *stats) *channel {
	ch := &channel{ready: make(chan struct{})}
	for range n {
		ch.writers = append(ch.writers, &writer{writerOptions: o, wake: make(chan struct{}, 1), stats: st})
	}
	return ch
}

// add gives c to the writers in turn.
func (ch *channel) add(c *conn) {
	w := ch.writers[int(ch.next.Add(1)-1)%len(ch.writers)]
	w.mu.Lock()
	w.subs = append(w.subs, c)
	w.perFmt[c.proto]++
	w.mu.Unlock()
}

// publish hands the publication, already encoded as one frame per format,
// to every writer and wakes them. It does not wait for any write.
func (ch *channel) publish(frames *[len(formats)][]byte) error {
	for _, w := range ch.writers {
		if err := w.enqueue(frames); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) enqueue(frames *[len(formats)][]byte) error {
	w.mu.Lock()
	for t := range formats {
		if len(w.pending[t]) > w.maxPending {
			w.mu.Unlock()
			w.stats.refused.Add(1)
			return errBacklog
		}
	}
	for t := range formats {
		if w.perFmt[t] > 0 {
			w.pending[t] = append(w.pending[t], frames[t]...)
		}
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default: // already woken: the next round takes this publication too
	}
	return nil
}

// run writes rounds until done is closed. A round takes everything pending
// and writes it to each socket in one write. With a roundInterval, a round
// begins at least that long after the one before it: what arrives sooner
// waits and goes out with whatever else arrives meanwhile, as with write
// coalescing at a fixed interval.
func (w *writer) run(done <-chan struct{}) {
	var spare [len(formats)][]byte
	var lastRound time.Time
	pause := time.NewTimer(time.Hour)
	pause.Stop()
	defer pause.Stop()
	for {
		select {
		case <-done:
			return
		case <-w.wake:
		}
		if w.roundInterval > 0 {
			if wait := time.Until(lastRound.Add(w.roundInterval)); wait > 0 {
				pause.Reset(wait)
				select {
				case <-done:
					return
				case <-pause.C:
				}
			}
			lastRound = time.Now()
		}
		w.mu.Lock()
		batch := w.pending
		for t := range spare {
			w.pending[t] = spare[t][:0]
		}
		// Subscribers added later are appended past len(subs): the
		// snapshot's elements do not change while it is in use.
		subs := w.subs
		w.mu.Unlock()
		if len(batch[protocol.TypeJSON])+len(batch[protocol.TypeProtobuf]) == 0 {
			// Woken by a publication the previous round took already.
			spare = batch
			continue
		}

		var writes, bytes, dead int64
		for _, c := range subs {
			b := batch[c.proto]
			if len(b) == 0 {
				continue
			}
			if c.dead.Load() {
				dead++
				continue
			}
			if w.writeTimeout > 0 {
				_ = c.nc.SetWriteDeadline(time.Now().Add(w.writeTimeout))
			}
			if _, err := c.nc.Write(b); err != nil {
				c.kill()
				dead++
				continue
			}
			writes++
			bytes += int64(len(b))
		}
		w.stats.rounds.Add(1)
		w.stats.writes.Add(writes)
		w.stats.bytes.Add(bytes)
		spare = batch
		if dead > 0 {
			w.compact()
		}
	}
}

// compact drops dead subscribers.
func (w *writer) compact() {
	w.mu.Lock()
	defer w.mu.Unlock()
	live := w.subs[:0]
	for _, c := range w.subs {
		if c.dead.Load() {
			w.perFmt[c.proto]--
			continue
		}
		live = append(live, c)
	}
	clear(w.subs[len(live):])
	w.subs = live
}
