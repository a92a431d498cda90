package sequence

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/heraldhq/herald/engine"
)

// stream is one channel's stored publications in fakeHistory.
type stream struct {
	epoch string
	top   uint64
	pubs  []*engine.Publication // ascending; trimmed ones left out
}

// fakeHistory is an in-process History: streams in a map, an optional
// batch size that cuts reads short (as Redis's ReplayBatch does), and
// failures on demand.
type fakeHistory struct {
	mu       sync.Mutex
	streams  map[string]*stream
	batch    int // 0: no limit
	fail     int // the next fail reads fail; -1: every read fails
	failed   chan struct{}
	tails    [][]Cursor // every Tails call's cursors
	betweens int
}

func newFakeHistory() *fakeHistory {
	return &fakeHistory{streams: make(map[string]*stream), failed: make(chan struct{}, 100)}
}

var errOutage = errors.New("history unavailable")

// store sets channel's stream to epoch with offsets 1..top, keeping only
// those listed in kept (all when kept is nil).
func (f *fakeHistory) store(channel, epoch string, top uint64, kept ...uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := &stream{epoch: epoch, top: top}
	for o := uint64(1); o <= top; o++ {
		if kept == nil || slices.Contains(kept, o) {
			st.pubs = append(st.pubs, pub(channel, o))
		}
	}
	f.streams[channel] = st
}

func (f *fakeHistory) setFail(n int) {
	f.mu.Lock()
	f.fail = n
	f.mu.Unlock()
}

// check fails a read if failures are due; f.mu is held.
func (f *fakeHistory) check() error {
	if f.fail == 0 {
		return nil
	}
	if f.fail > 0 {
		f.fail--
	}
	select {
	case f.failed <- struct{}{}:
	default:
	}
	return errOutage
}

// read returns channel's publications after after up to upto (0: top),
// at most batch of them, and whether the batch cut the read.
func (f *fakeHistory) read(st *stream, after, upto uint64) ([]*engine.Publication, bool) {
	if upto == 0 {
		upto = st.top
	}
	var out []*engine.Publication
	for _, p := range st.pubs {
		if p.Offset > after && p.Offset <= upto {
			out = append(out, p)
		}
	}
	if f.batch > 0 && len(out) >= f.batch {
		return out[:f.batch], true
	}
	return out, false
}

func (f *fakeHistory) Between(_ context.Context, channel, epoch string, after, upto uint64) ([]*engine.Publication, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.betweens++
	if err := f.check(); err != nil {
		return nil, false, err
	}
	st := f.streams[channel]
	if st == nil || st.epoch != epoch {
		return nil, false, nil
	}
	pubs, more := f.read(st, after, upto)
	return pubs, more, nil
}

// Tails answers as the Redis engine does: a tail of another epoch comes
// without publications, for the Sequencer to read again from the start.
func (f *fakeHistory) Tails(_ context.Context, cursors []Cursor) ([]Tail, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tails = append(f.tails, slices.Clone(cursors))
	if err := f.check(); err != nil {
		return nil, err
	}
	out := make([]Tail, len(cursors))
	for i, c := range cursors {
		st := f.streams[c.Channel]
		if st == nil {
			continue
		}
		out[i] = Tail{Top: st.top, Epoch: st.epoch}
		if st.epoch != c.Epoch {
			out[i].More = st.top > 0
			continue
		}
		out[i].Pubs, out[i].More = f.read(st, c.After, 0)
	}
	return out, nil
}

func (f *fakeHistory) tailCalls() [][]Cursor {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.tails)
}

// pub is the publication at offset o of channel.
func pub(channel string, o uint64) *engine.Publication {
	return &engine.Publication{Offset: o, Data: fmt.Appendf(nil, "%s/%d", channel, o)}
}

// counters is a Metrics that keeps totals.
type counters struct {
	mu                   sync.Mutex
	gaps, replayed, lost uint64
}

func (c *counters) GapRepaired() { c.mu.Lock(); c.gaps++; c.mu.Unlock() }
func (c *counters) Replayed(n int) {
	c.mu.Lock()
	c.replayed += uint64(n)
	c.mu.Unlock()
}
func (c *counters) Lost(n uint64) { c.mu.Lock(); c.lost += n; c.mu.Unlock() }

func (c *counters) get() (gaps, replayed, lost uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gaps, c.replayed, c.lost
}
