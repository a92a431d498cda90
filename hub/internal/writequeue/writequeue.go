// Package writequeue holds the mechanics of a client's write queue: the
// encoded messages waiting to be written (Item), the recycled arrays they
// wait in (Arrays), dropping the oldest droppable ones when the queue is
// over its bound (DropOldest), and batching them into frames (Framer). It
// knows nothing of clients: the hub keeps each client's queue under the
// client's lock and decides when to flush, drop or close.
package writequeue

import (
	"sync"

	"github.com/heraldhq/herald/protocol"
)

// A frame carries at most this many messages or bytes (unless a single
// message is larger), so that one busy channel cannot build frames larger
// than clients accept.
const (
	MaxFrameMessages = 128
	MaxFrameBytes    = 64 << 10
)

// Item is an encoded message waiting in a client's queue. Droppable marks
// publications of namespaces that drop the oldest when the queue is full;
// Sub is set for publications of delta subscriptions (the subscription's
// identity), Delta when Msg is a delta against the previous one of Sub.
type Item[S comparable] struct {
	Msg       []byte
	Droppable bool
	Delta     bool
	Sub       S
}

// ArrayLen is the length of a recycled queue array.
const ArrayLen = 16

// Arrays recycles clients' queues. A flush hands the client's whole queue
// to the writer and the client starts a new one; allocated afresh, and
// grown by append one message at a time, those slices were 90% of a busy
// node's allocation (532 MB in 10 s at 1,000 msg/s to 500 subscribers),
// and so what set its GC's pace. A queue starts in a recycled array of
// ArrayLen; one that outgrows it was reallocated by append and is left to
// the collector. An idle client holds none. The zero Arrays is ready.
type Arrays[S comparable] struct {
	pool sync.Pool
}

// New is an empty queue in a recycled array.
func (a *Arrays[S]) New() []Item[S] {
	if v := a.pool.Get(); v != nil {
		return v.(*[ArrayLen]Item[S])[:0]
	}
	return new([ArrayLen]Item[S])[:0]
}

// Recycle takes back a written queue's array, without its messages, if it
// is one of New's. Only the queue's own items are cleared: past its length
// the array is still zero, as New handed it out (append fills it in order,
// and DropOldest clears what it removes), and a flush usually holds one or
// two of the ArrayLen items, so clearing the whole array wrote ten times
// the memory it needed to.
func (a *Arrays[S]) Recycle(q []Item[S]) {
	if cap(q) != ArrayLen {
		return
	}
	clear(q)
	a.pool.Put((*[ArrayLen]Item[S])(q[:ArrayLen]))
}

// DropOldest removes droppable items, oldest first, while the queue's
// bytes (size) are over limit, in place. A delta queued after a dropped
// publication of its subscription has lost its base, so it goes too, up
// to the next full publication of that subscription. It returns what is
// kept, its bytes, how many items it removed, the subscriptions whose
// chain is still broken at the end (their next publication must go in
// full; nil when none), and whether a droppable item is left.
func DropOldest[S comparable](q []Item[S], size, limit int) (kept []Item[S], newSize, dropped int, broken map[S]bool, droppable bool) {
	var zero S
	kept = q[:0]
	for _, m := range q {
		if m.Droppable && size > limit {
			size -= len(m.Msg)
			dropped++
			if m.Sub != zero {
				if broken == nil {
					broken = make(map[S]bool)
				}
				broken[m.Sub] = true
			}
			continue
		}
		droppable = droppable || m.Droppable
		kept = append(kept, m)
	}
	clear(q[len(kept):])
	if broken == nil {
		return kept, size, dropped, nil, droppable
	}
	// Second pass: the deltas whose base went.
	q, kept = kept, kept[:0]
	for _, m := range q {
		if m.Sub != zero && broken[m.Sub] {
			if m.Delta {
				size -= len(m.Msg)
				dropped++
				continue
			}
			delete(broken, m.Sub)
		}
		kept = append(kept, m)
	}
	clear(q[len(kept):])
	return kept, size, dropped, broken, droppable
}

// frameBufs holds frame buffers between flushes, so an idle client keeps
// none.
var frameBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// Framer batches a queue into frames for one flush, in a buffer borrowed
// for the flush when one is needed (Release gives it back).
type Framer struct {
	bp *[]byte
}

// NewFramer is a Framer that borrows its buffer when a flush first needs
// one: a flush of a single JSON message needs none.
func NewFramer() Framer { return Framer{} }

// buf is the borrowed buffer, emptied, borrowing it on first use.
func (f *Framer) buf() []byte {
	if f.bp == nil {
		f.bp = frameBufs.Get().(*[]byte)
	}
	return (*f.bp)[:0]
}

// Release gives the buffer back, if one was borrowed.
func (f *Framer) Release() {
	if f.bp != nil {
		frameBufs.Put(f.bp)
		f.bp = nil
	}
}

// Frames appends q's messages to frames of at most MaxFrameMessages or
// MaxFrameBytes in encoding t and passes each to write, stopping at the
// first error. In JSON a message alone in its frame is the frame, and is
// written as it is, not copied: one larger than MaxFrameBytes, since a
// frame written to a client that stopped reading is held until its write
// ends, and a copy of a 6 MB history reply held as well doubled what each
// such client cost the node (issue 35 #3); and the last one of a queue
// when it starts a frame, as the one message of the usual flush at low
// rates does, where the copy cost each delivered copy a borrowed buffer
// and the copy. (A protobuf frame prefixes each message with its length,
// so it is always built.)
//
// A message passed as it is may be shared with other clients' queues
// (publications are encoded once), so write gets it with its capacity cut
// to its length: an append to it makes a copy instead of writing into the
// array behind it.
func Frames[S comparable](f *Framer, t protocol.Type, q []Item[S], write func([]byte) error) error {
	var buf []byte
	n := 0
	for i, e := range q {
		m := e.Msg
		if n > 0 && (n == MaxFrameMessages || len(buf)+len(m) > MaxFrameBytes) {
			if err := write(buf); err != nil {
				return err
			}
			buf, n = buf[:0], 0
		}
		if n == 0 && t != protocol.TypeProtobuf && (len(m) > MaxFrameBytes || i == len(q)-1) {
			if err := write(m[:len(m):len(m)]); err != nil {
				return err
			}
			continue
		}
		if buf == nil {
			buf = f.buf()
		}
		buf = protocol.AppendMessage(t, buf, m)
		n++
	}
	if n == 0 && len(q) > 0 {
		return nil // the last message went as it was
	}
	err := write(buf)
	if f.bp != nil && cap(buf) <= 256<<10 {
		*f.bp = buf[:0]
	}
	return err
}
