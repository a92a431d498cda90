package sequence

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/heraldhq/herald/engine"
)

// Defaults of Config's zero fields.
const (
	DefaultReplayChunk = 500
	DefaultReadTimeout = 10 * time.Second
)

// Config is what a Sequencer needs from its engine. M is the engine's
// queued message, as its connection's reader received it.
type Config[M any] struct {
	// Resolve turns a queued message into what the Handler is given, or
	// reports false to drop it (after logging and counting why). It runs
	// on the Sequencer's goroutine, so it may decode and read (through
	// Retry) without slowing the connection's reader. channel is the one
	// the message was queued with.
	Resolve func(channel string, m M) (Message, bool)
	// History is where gaps are refilled and replays read from.
	History History
	// Metrics counts repairs; nil counts nothing.
	Metrics Metrics
	// Log receives the Sequencer's warnings; nil logs nothing.
	Log *slog.Logger
	// ReadTimeout bounds each attempt of a read made through Retry; 0
	// means DefaultReadTimeout.
	ReadTimeout time.Duration
	// Backoff is the wait before retry number n (from 1) of a failed read.
	Backoff func(n int) time.Duration
	// ReplayChunk bounds the channels of one Tails call; 0 means
	// DefaultReplayChunk.
	ReplayChunk int
}

type op uint8

const (
	opMessage op = iota
	opSubscribe
	opUnsubscribe
	opResync    // one channel
	opResyncAll // every subscribed channel
)

type event[M any] struct {
	op      op
	channel string
	msg     M
	base    engine.StreamPosition // opSubscribe: the stream's position when subscribing
	resyncs uint64                // opSubscribe: Resyncs before base was read
	replay  bool                  // opSubscribe: a resync was queued since base was read
}

// channelState is what the Sequencer knows of one subscribed channel.
type channelState struct {
	name  string // owned by the Sequencer; messages' names may point into payloads
	last  uint64 // highest offset delivered or known to be covered
	epoch string
}

// Sequencer orders one connection's (or one shard's) deliveries; see the
// package documentation for what it promises. Its queueing methods may be
// called from any goroutine; Run delivers.
type Sequencer[M any] struct {
	cfg     Config[M]
	metrics Metrics
	log     *slog.Logger

	ctx    context.Context // cancelled by Stop, ending reads in flight
	cancel context.CancelFunc
	quit   chan struct{}
	once   sync.Once

	mu   sync.Mutex
	subs map[string]struct{} // subscriptions as queued, to drop early what nobody wants
	// expect counts the subscriptions of a channel between Expect and
	// their Subscribe (or Forget); missed holds those of them for which a
	// message was dropped meanwhile (Expect).
	expect  map[string]int
	missed  map[string]bool
	queue   []event[M]
	spare   []event[M]
	resyncs uint64
	wake    chan struct{}

	// Owned by Run's goroutine.
	h     engine.Handler
	chans map[string]*channelState
}

// New returns a Sequencer that queues from now on and delivers once Run
// is called. It panics when cfg lacks Resolve, History or Backoff, which
// is a programming error of the engine.
func New[M any](cfg Config[M]) *Sequencer[M] {
	if cfg.Resolve == nil || cfg.History == nil || cfg.Backoff == nil {
		panic("sequence.New: Config needs Resolve, History and Backoff")
	}
	if cfg.ReplayChunk <= 0 {
		cfg.ReplayChunk = DefaultReplayChunk
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	s := &Sequencer[M]{
		cfg:     cfg,
		metrics: cfg.Metrics,
		log:     cfg.Log,
		quit:    make(chan struct{}),
		subs:    make(map[string]struct{}),
		expect:  make(map[string]int),
		missed:  make(map[string]bool),
		wake:    make(chan struct{}, 1),
		chans:   make(map[string]*channelState),
	}
	if s.metrics == nil {
		s.metrics = noMetrics{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// push queues ev unless it is a message of a channel nobody here
// subscribed to, which would be dropped at delivery anyway.
func (s *Sequencer[M]) push(ev event[M]) {
	s.mu.Lock()
	switch ev.op {
	case opMessage:
		if _, ok := s.subs[ev.channel]; !ok && ev.channel != "" {
			if s.expect[ev.channel] > 0 {
				s.missed[ev.channel] = true
			}
			s.mu.Unlock()
			return
		}
	case opSubscribe:
		s.subs[ev.channel] = struct{}{}
		ev.replay = ev.resyncs != s.resyncs || s.missed[ev.channel]
		s.releaseLocked(ev.channel)
	case opUnsubscribe:
		delete(s.subs, ev.channel)
	case opResync, opResyncAll:
		s.resyncs++
	}
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Deliver queues a received message of channel; channel is empty for a
// message that belongs to no channel (a control message).
func (s *Sequencer[M]) Deliver(channel string, m M) {
	s.push(event[M]{op: opMessage, channel: channel, msg: m})
}

// Resyncs returns a count of the resyncs queued so far. An engine reads it
// before it reads a new subscription's base position and passes it to
// Subscribe, which then replays the channel if a resync came in between
// and so could not include it.
func (s *Sequencer[M]) Resyncs() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resyncs
}

// Expect announces a subscription of channel whose base position is about
// to be read, for an engine whose connection receives the channel's
// messages whether or not this node subscribed (PostgreSQL's LISTEN covers
// every channel of a partition). A message of channel that arrives between
// the read and Subscribe is still dropped, as the channel is not
// subscribed yet, but it is remembered, and Subscribe then replays the
// channel from its base: without that, a publication committed just after
// the read whose message came before the Subscribe would wait for the
// channel's next publication to be found missing, and the last one of a
// burst would not be delivered at all. Every Expect is followed by the
// channel's Subscribe or, when the subscription fails, its Forget.
func (s *Sequencer[M]) Expect(channel string) {
	s.mu.Lock()
	s.expect[channel]++
	s.mu.Unlock()
}

// Forget ends an Expect whose subscription failed before its Subscribe.
func (s *Sequencer[M]) Forget(channel string) {
	s.mu.Lock()
	s.releaseLocked(channel)
	s.mu.Unlock()
}

// releaseLocked ends one Expect of channel, if any; the last one's end
// forgets what was missed.
func (s *Sequencer[M]) releaseLocked(channel string) {
	switch n := s.expect[channel]; {
	case n > 1:
		s.expect[channel] = n - 1
	case n == 1:
		delete(s.expect, channel)
		delete(s.missed, channel)
	}
}

// Subscribe queues the start of channel's delivery from base, the stream's
// position read before the subscription took effect (zero for a channel
// without a stream); resyncs is what Resyncs returned before base was read.
// A channel already subscribed keeps its place.
func (s *Sequencer[M]) Subscribe(channel string, base engine.StreamPosition, resyncs uint64) {
	s.push(event[M]{op: opSubscribe, channel: channel, base: base, resyncs: resyncs})
}

// Unsubscribe queues the end of channel's delivery.
func (s *Sequencer[M]) Unsubscribe(channel string) {
	s.push(event[M]{op: opUnsubscribe, channel: channel})
}

// Resync queues a replay of channel, for when its messages may have been
// lost (its subscription was re-established) up to this point of the queue.
func (s *Sequencer[M]) Resync(channel string) {
	s.push(event[M]{op: opResync, channel: channel})
}

// ResyncAll queues a replay of every subscribed channel, for when the
// connection that carries them all was re-established.
func (s *Sequencer[M]) ResyncAll() {
	s.push(event[M]{op: opResyncAll})
}

// Depth returns the number of queued events not yet taken for delivery.
func (s *Sequencer[M]) Depth() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Stop ends Run and any read in flight; queued events are dropped. It may
// be called more than once, and before Run.
func (s *Sequencer[M]) Stop() {
	s.once.Do(func() {
		close(s.quit)
		s.cancel()
	})
}

func (s *Sequencer[M]) stopped() bool {
	select {
	case <-s.quit:
		return true
	default:
		return false
	}
}

// Run delivers to h until Stop. It is called once.
func (s *Sequencer[M]) Run(h engine.Handler) {
	s.h = h
	for {
		select {
		case <-s.wake:
		case <-s.quit:
			return
		}
		for {
			s.mu.Lock()
			batch := s.queue
			s.queue, s.spare = s.spare, nil
			s.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			if !s.handleBatch(batch) {
				return
			}
			clear(batch)
			s.mu.Lock()
			s.spare = batch[:0]
			s.mu.Unlock()
		}
	}
}

// handleBatch handles queued events in order; it reports false once the
// Sequencer stopped.
func (s *Sequencer[M]) handleBatch(batch []event[M]) bool {
	for i := 0; i < len(batch); {
		if s.stopped() {
			return false
		}
		ev := &batch[i]
		if ev.op != opResync && ev.op != opResyncAll {
			s.handle(ev)
			i++
			continue
		}
		// Resyncs come in bursts after a reconnect (one per channel of
		// the connection); one replay serves them all.
		j := i + 1
		for j < len(batch) && (batch[j].op == opResync || batch[j].op == opResyncAll) {
			j++
		}
		s.replay(s.resyncList(batch[i:j]))
		i = j
	}
	return true
}

func (s *Sequencer[M]) handle(ev *event[M]) {
	switch ev.op {
	case opSubscribe:
		st := s.chans[ev.channel]
		if st == nil {
			st = &channelState{name: ev.channel, last: ev.base.Offset, epoch: ev.base.Epoch}
			s.chans[ev.channel] = st
		}
		if ev.replay {
			s.replay([]*channelState{st})
		}
	case opUnsubscribe:
		delete(s.chans, ev.channel)
	case opMessage:
		if m, ok := s.cfg.Resolve(ev.channel, ev.msg); ok {
			s.deliver(m)
		}
	}
}

// resyncList returns the subscribed channels a run of resync events
// names, each once.
func (s *Sequencer[M]) resyncList(evs []event[M]) []*channelState {
	for _, ev := range evs {
		if ev.op == opResyncAll {
			list := make([]*channelState, 0, len(s.chans))
			for _, st := range s.chans {
				list = append(list, st)
			}
			return list
		}
	}
	list := make([]*channelState, 0, len(evs))
	seen := make(map[*channelState]bool, len(evs))
	for _, ev := range evs {
		if st := s.chans[ev.channel]; st != nil && !seen[st] {
			seen[st] = true
			list = append(list, st)
		}
	}
	return list
}

// Subscribed reports whether channel is subscribed at this point of the
// queue. Only Resolve may call it (it runs on the delivering goroutine).
func (s *Sequencer[M]) Subscribed(channel string) bool {
	return s.chans[channel] != nil
}
