package loadgen

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// maxSteps bounds the steps of one run (the tally keeps a slot per step).
const maxSteps = 4096

// maxTallyBits bounds one step's duplicate-detection bitset
// (subscribers × publications), 512 MiB.
const maxTallyBits = 1 << 32

// Tally counts what the subscribers of one process receive: per step,
// which (publication, subscriber) pairs arrived (for missing and duplicate
// counts), the first and last copy of each publication, and a histogram of
// all copies. Record is safe for concurrent use; giving each reading
// goroutine its own shard index keeps the histogram locks uncontended.
type Tally struct {
	subs   int
	shards int
	steps  [maxSteps]atomic.Pointer[stepTally]
	late   atomic.Int64
	bad    atomic.Int64
}

type stepTally struct {
	n     int
	done  atomic.Bool
	seen  []atomic.Uint64 // bit sub*n+seq
	first []atomic.Int64  // earliest copy's latency per seq (ns); MaxInt64 when none
	last  []atomic.Int64  // latest copy's latency per seq (ns); -1 when none
	uniq  atomic.Int64
	dups  atomic.Int64
	late  atomic.Int64
	hists []lockedHist // one per shard
}

// lockedHist is a shard's histogram. The lock is uncontended while the
// step runs; it orders the shard's records before Finalize's read.
type lockedHist struct {
	mu sync.Mutex
	h  *Histogram
}

// NewTally counts for subs subscribers read by `shards` goroutines.
func NewTally(subs, shards int) *Tally {
	return &Tally{subs: subs, shards: max(shards, 1)}
}

// Subscribers is the number of subscribers the tally counts for.
func (t *Tally) Subscribers() int { return t.subs }

func (t *Tally) step(k, n int) (*stepTally, error) {
	if k < 0 || k >= maxSteps {
		return nil, fmt.Errorf("step %d out of range", k)
	}
	if st := t.steps[k].Load(); st != nil {
		if st.n != n {
			return nil, fmt.Errorf("step %d: %d publications, earlier copies said %d", k, n, st.n)
		}
		return st, nil
	}
	bits := uint64(t.subs) * uint64(n)
	if bits > maxTallyBits {
		return nil, fmt.Errorf("step %d: %d subscribers × %d publications is too many to track", k, t.subs, n)
	}
	st := &stepTally{
		n:     n,
		seen:  make([]atomic.Uint64, (bits+63)/64),
		first: make([]atomic.Int64, n),
		last:  make([]atomic.Int64, n),
		hists: make([]lockedHist, t.shards),
	}
	for i := range n {
		st.first[i].Store(math.MaxInt64)
		st.last[i].Store(-1)
	}
	if t.steps[k].CompareAndSwap(nil, st) {
		return st, nil
	}
	return t.step(k, n)
}

// Record counts one copy of m received by subscriber sub, latency after
// it was due, read by goroutine shard.
func (t *Tally) Record(shard, sub int, m Message, latency time.Duration) {
	var held *lockedHist
	t.record(shard, sub, m, latency, &held)
	if held != nil {
		held.mu.Unlock()
	}
}

// RecordAll counts copies that subscriber sub received together at at
// (a frame's publications): the shard's histogram is locked once.
func (t *Tally) RecordAll(shard, sub int, ms []Message, at int64) {
	var held *lockedHist
	for _, m := range ms {
		t.record(shard, sub, m, time.Duration(at-m.Intended), &held)
	}
	if held != nil {
		held.mu.Unlock()
	}
}

// record counts one copy; it leaves the histogram it records in locked
// in *held, for the next copy of the same step.
func (t *Tally) record(shard, sub int, m Message, latency time.Duration, held **lockedHist) {
	if sub < 0 || sub >= t.subs || shard < 0 || shard >= t.shards {
		t.bad.Add(1)
		return
	}
	st, err := t.step(m.Step, m.N)
	if err != nil || m.Seq < 0 || m.Seq >= st.n {
		t.bad.Add(1)
		return
	}
	if st.done.Load() {
		// Arrived after the step was reported: it already counts as
		// missing there.
		st.late.Add(1)
		t.late.Add(1)
		return
	}
	bit := uint64(sub)*uint64(st.n) + uint64(m.Seq)
	mask := uint64(1) << (bit % 64)
	if st.seen[bit/64].Or(mask)&mask != 0 {
		st.dups.Add(1)
		return
	}
	st.uniq.Add(1)
	ns := int64(latency)
	if ns < 0 {
		ns = 0
	}
	for cur := st.first[m.Seq].Load(); ns < cur && !st.first[m.Seq].CompareAndSwap(cur, ns); cur = st.first[m.Seq].Load() {
	}
	for cur := st.last[m.Seq].Load(); ns > cur && !st.last[m.Seq].CompareAndSwap(cur, ns); cur = st.last[m.Seq].Load() {
	}
	lh := &st.hists[shard]
	if *held != lh {
		if *held != nil {
			(*held).mu.Unlock()
		}
		lh.mu.Lock()
		*held = lh
	}
	if lh.h == nil {
		lh.h = NewHistogram()
	}
	lh.h.Record(latency)
}

// Bad counts copies that could not be attributed (unparsable payload,
// unknown step or subscriber).
func (t *Tally) Bad() int64 { return t.bad.Load() }

// Late counts copies that arrived after their step was finalized.
func (t *Tally) Late() int64 { return t.late.Load() }

// StepTally is one process's count of one step, as sent to the
// coordinator.
type StepTally struct {
	Step        int   `json:"step"`
	N           int   `json:"n"`
	Subscribers int   `json:"subscribers"`
	Unique      int64 `json:"unique"`
	Duplicates  int64 `json:"duplicates"`
	// Hist is the encoded histogram of all unique copies.
	Hist    string `json:"hist"`
	Clipped int64  `json:"clipped,omitempty"`
	// FirstUs and LastUs hold, per publication, the latency of its first
	// and last copy here in microseconds, -1 when none arrived.
	FirstUs []int32 `json:"first_us"`
	LastUs  []int32 `json:"last_us"`
	// ReaderTurn and ReaderUnread are the worker's longest reader turn
	// and longest unread wait over the step (Pool.TakeReaderSpans).
	ReaderTurn   time.Duration `json:"reader_turn,omitempty"`
	ReaderUnread time.Duration `json:"reader_unread,omitempty"`
}

// Finalize reports step k and stops counting it: copies that arrive later
// count as late. n is the step's publication count (used when no copy
// arrived at all).
func (t *Tally) Finalize(k, n int) (StepTally, error) {
	st, err := t.step(k, n)
	if err != nil {
		return StepTally{}, err
	}
	st.done.Store(true)
	hist := NewHistogram()
	for i := range st.hists {
		lh := &st.hists[i]
		lh.mu.Lock()
		if lh.h != nil {
			hist.Merge(lh.h)
		}
		lh.mu.Unlock()
	}
	enc, err := hist.Encode()
	if err != nil {
		return StepTally{}, fmt.Errorf("step %d: %w", k, err)
	}
	out := StepTally{
		Step: k, N: st.n, Subscribers: t.subs,
		Unique: st.uniq.Load(), Duplicates: st.dups.Load(),
		Hist: enc, Clipped: hist.Clipped,
		FirstUs: make([]int32, st.n), LastUs: make([]int32, st.n),
	}
	for q := range st.n {
		out.FirstUs[q], out.LastUs[q] = -1, -1
		if f := st.first[q].Load(); f != math.MaxInt64 {
			out.FirstUs[q] = usInt32(f)
		}
		if l := st.last[q].Load(); l >= 0 {
			out.LastUs[q] = usInt32(l)
		}
	}
	// Keep the tombstone (for late counting) but let the big arrays go.
	tomb := &stepTally{n: st.n}
	tomb.done.Store(true)
	t.steps[k].Store(tomb)
	return out, nil
}

func usInt32(ns int64) int32 {
	us := ns / int64(time.Microsecond)
	if us > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(us)
}
