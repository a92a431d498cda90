package memory

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gammazero/deque"

	"github.com/heraldhq/herald/engine"
)

var (
	_ engine.ChannelStates           = (*Engine)(nil)
	_ engine.ChannelStateDropCounter = (*Engine)(nil)
)

// channelStateState is the engine's engine.ChannelStates for one process:
// the node's own changes are the cluster's. Hubs that share one engine in
// a test count as one node, so occupancy is a count of the calls, not a
// set of nodes.
type channelStateState struct {
	mu    sync.Mutex
	chans map[string]*memChannelState
	// queue holds the undelivered events in the order they were made;
	// head is the sequence number of its front (events dropped or
	// delivered so far), so a delivery finds its batch again after the
	// bound dropped some of it meanwhile. A ring buffer: at the bound
	// each new event drops the oldest in constant time, where a slice
	// shifted all 100,000 (channel.state.queue_size) per event.
	queue deque.Deque[engine.ChannelStateEvent]
	head  uint64
	// maxQueue is the bound last given (ChannelStateOptions.MaxQueue);
	// dropped counts what it dropped.
	maxQueue int
	dropped  atomic.Uint64
	// delivering is set while a DeliverChannelStates hands events out,
	// so a second caller returns at once, as on a shared engine.
	delivering bool
	// flightEnd is the sequence number after the batch being delivered.
	// An event of that batch that the bound drops meanwhile is not lost
	// yet: it reaches the backend if the delivery succeeds. So its drop
	// waits in flightDropped and counts only if the delivery fails.
	flightEnd     uint64
	flightDropped uint64
}

// memChannelState is one channel that is occupied, or was until its
// vacated delay runs out.
type memChannelState struct {
	holders  int
	occupied bool
	// vacateAt is when the channel is vacated, zero when not pending.
	vacateAt time.Time
	lastMs   int64
}

// SetChannelOccupancy implements engine.ChannelStates.
func (e *Engine) SetChannelOccupancy(ctx context.Context, channel string, occupied bool, opts engine.ChannelStateOptions) error {
	if err := e.life.Usable(ctx); err != nil {
		return err
	}
	s := &e.chstate
	now := e.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chans == nil {
		s.chans = map[string]*memChannelState{}
	}
	s.maxQueue = opts.MaxQueue
	st := s.chans[channel]
	if occupied {
		if st == nil {
			st = &memChannelState{}
			s.chans[channel] = st
		}
		st.holders++
		st.vacateAt = time.Time{}
		if !st.occupied {
			st.occupied = true
			s.emit(channel, st, engine.ChannelOccupied, now)
		}
		return nil
	}
	if st == nil || st.holders == 0 {
		return nil
	}
	st.holders--
	if st.holders == 0 && st.occupied {
		st.vacateAt = now.Add(opts.VacatedDelay)
		if opts.VacatedDelay <= 0 {
			s.vacate(channel, st, now)
		}
	}
	return nil
}

// emit queues an event of channel whose time is after the channel's last.
func (s *channelStateState) emit(channel string, st *memChannelState, typ string, now time.Time) {
	ms := max(now.UnixMilli(), st.lastMs+1)
	st.lastMs = ms
	s.queue.PushBack(engine.ChannelStateEvent{Channel: channel, Type: typ, TimeMs: ms})
	if s.maxQueue > 0 {
		for s.queue.Len() > s.maxQueue {
			s.queue.PopFront()
			if s.delivering && s.head < s.flightEnd {
				s.flightDropped++
			} else {
				s.dropped.Add(1)
			}
			s.head++
		}
	}
}

// ChannelStateEventsDropped implements engine.ChannelStateDropCounter.
func (e *Engine) ChannelStateEventsDropped() uint64 { return e.chstate.dropped.Load() }

// vacate makes the vacated event of an empty channel. The entry stays,
// for its lastMs, until the clock has passed it (DeliverChannelStates).
func (s *channelStateState) vacate(channel string, st *memChannelState, now time.Time) {
	st.occupied = false
	st.vacateAt = time.Time{}
	s.emit(channel, st, engine.ChannelVacated, now)
}

// KeepChannelOccupancy implements engine.ChannelStates: a process's
// records live as long as it does.
func (e *Engine) KeepChannelOccupancy(ctx context.Context, _ time.Duration) (bool, error) {
	return false, e.life.Usable(ctx)
}

// ReleaseChannelOccupancy implements engine.ChannelStates: the process
// is stopping, and its events with it.
func (e *Engine) ReleaseChannelOccupancy(ctx context.Context) error {
	return e.life.Usable(ctx)
}

// DeliverChannelStates implements engine.ChannelStates.
func (e *Engine) DeliverChannelStates(ctx context.Context, limit int, fn func(context.Context, []engine.ChannelStateEvent) error) (int, error) {
	if err := e.life.Usable(ctx); err != nil {
		return 0, err
	}
	s := &e.chstate
	now := e.opts.Now()
	s.mu.Lock()
	if s.delivering {
		s.mu.Unlock()
		return 0, nil
	}
	for ch, st := range s.chans {
		if !st.vacateAt.IsZero() && !now.Before(st.vacateAt) {
			s.vacate(ch, st, now)
		}
		if !st.occupied && st.lastMs < now.UnixMilli() {
			// A later event gets a later time anyway.
			delete(s.chans, ch)
		}
	}
	n := min(limit, s.queue.Len())
	if n == 0 {
		s.mu.Unlock()
		return 0, nil
	}
	batch := make([]engine.ChannelStateEvent, n)
	for i := range batch {
		batch[i] = s.queue.At(i)
	}
	end := s.head + uint64(n)
	s.delivering, s.flightEnd, s.flightDropped = true, end, 0
	s.mu.Unlock()

	err := fn(ctx, batch)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.delivering = false
	if err != nil {
		// The batch's events the bound dropped meanwhile are lost now.
		s.dropped.Add(s.flightDropped)
		return 0, err
	}
	// Events are only appended meanwhile, and the oldest dropped: what
	// is left of the batch is the head.
	for ; s.head < end; s.head++ {
		s.queue.PopFront()
	}
	return n, nil
}
