package memory

import (
	"container/heap"
	"math"
	"time"
)

// timer is embedded in everything that expires. It remembers the one
// deadline of the owner that is live in an expiryQueue; deadlines left behind
// by rescheduling or removal are recognised as stale when popped, which keeps
// one queue entry per item instead of one per refresh.
type timer struct {
	gen   uint64 // generation of the live deadline; 0 when none is
	dueAt int64
}

// cancel makes any pending deadline of the owner stale.
func (t *timer) cancel() { t.gen = 0 }

// fire reports whether d is the owner's live deadline, and if so marks the
// owner as no longer scheduled.
func (t *timer) fire(gen uint64) bool {
	if t.gen == 0 || t.gen != gen {
		return false
	}
	t.gen = 0
	return true
}

type deadline[T any] struct {
	at   int64 // Unix nanoseconds
	gen  uint64
	item T
}

// expiryQueue orders deadlines by time so the janitor only looks at items
// that are due, never scanning whole maps.
type expiryQueue[T any] struct {
	heap deadlineHeap[T]
	gen  uint64
}

// schedule makes sure item is looked at no later than due. An existing
// earlier deadline is kept: when it fires, the owner reschedules itself.
func (q *expiryQueue[T]) schedule(t *timer, due int64, item T) {
	if t.gen != 0 && t.dueAt <= due {
		return
	}
	q.gen++
	t.gen, t.dueAt = q.gen, due
	heap.Push(&q.heap, deadline[T]{at: due, gen: q.gen, item: item})
}

// popDue removes and returns the earliest deadline if it is at or before
// now. The caller checks it with timer.fire, since it may be stale.
func (q *expiryQueue[T]) popDue(now int64) (deadline[T], bool) {
	if len(q.heap) == 0 || q.heap[0].at > now {
		return deadline[T]{}, false
	}
	return heap.Pop(&q.heap).(deadline[T]), true
}

func (q *expiryQueue[T]) len() int { return len(q.heap) }

type deadlineHeap[T any] []deadline[T]

func (h deadlineHeap[T]) Len() int           { return len(h) }
func (h deadlineHeap[T]) Less(i, j int) bool { return h[i].at < h[j].at }
func (h deadlineHeap[T]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }

// Push is for container/heap; use expiryQueue.schedule.
func (h *deadlineHeap[T]) Push(x any) { *h = append(*h, x.(deadline[T])) }

// Pop is for container/heap; use expiryQueue.popDue.
func (h *deadlineHeap[T]) Pop() any {
	old := *h
	last := old[len(old)-1]
	old[len(old)-1] = deadline[T]{} // drop the reference to the item
	*h = old[:len(old)-1]
	return last
}

// after returns now+d in Unix nanoseconds, saturating instead of wrapping
// for durations meant as "practically forever".
func after(now int64, d time.Duration) int64 {
	if int64(d) > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + int64(d)
}
