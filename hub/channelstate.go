package hub

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/engine"
)

// Channel state events (Centrifugo PRO's "occupied" and "vacated"): the
// hub tells the engine when a channel of a namespace with StateEvents
// gets its first local subscriber and loses its last one; the engine,
// which sees every node, decides the cluster's changes once and keeps the
// events until one node delivers them to Handlers.OnChannelState.
//
// The engine is told in the background, as engine interest is
// (interest.go): per channel one goroutine at a time brings the engine in
// line with the registry, so a node's changes of one channel reach the
// engine in order and a subscribe never waits for them.

const (
	// channelStatePoll is how often a node looks for due vacated events
	// and for events made on other nodes; a change made on this node
	// wakes its deliverer at once.
	channelStatePoll = 200 * time.Millisecond
	// channelStateBatch bounds the events of one delivery, as the
	// "events" array of one proxy request.
	channelStateBatch = 100
	// channelStateRetryMax bounds the backoff after the handler failed
	// (the backend down): Centrifugo PRO backs off the same way.
	channelStateRetryMax = 10 * time.Second
	// channelStateEngineRetryMax bounds the backoff after the engine
	// failed (a database error): the events then wait in the engine, not
	// at a backend, and a long backoff would only make every vacated
	// event that much later than its delay once the engine is back.
	channelStateEngineRetryMax = time.Second
	// channelStateKeepTick is the keeper's longest tick: it renews the
	// lease and retries failed records on it.
	channelStateKeepTick = time.Second
)

// channelStates is the hub's side of channel state events; its zero value
// is off.
type channelStates struct {
	h       *Hub
	eng     engine.ChannelStates // nil: off
	opts    engine.ChannelStateOptions
	deliver func(context.Context, []ChannelStateEvent) error

	mu    sync.Mutex
	chans map[string]*chanState
	wake  chan struct{}

	delivered prometheus.Counter
}

// dropped reads the engine's count of events its bound dropped, 0 when
// it bounds none.
func (s *channelStates) dropped() float64 {
	if dc, ok := s.eng.(engine.ChannelStateDropCounter); ok {
		return float64(dc.ChannelStateEventsDropped())
	}
	return 0
}

// chanState is one channel's occupancy as this node has told the engine.
type chanState struct {
	declared bool // the engine holds this node's record of the channel
	busy     bool // a goroutine is bringing the engine in line
	failed   bool // the last engine call failed; the keeper retries
}

// init turns channel state events on when a namespace asks for them.
func (s *channelStates) init(h *Hub, cfg Config) error {
	if !cfg.Channels.hasStateEvents() {
		return nil
	}
	eng, ok := engine.ChannelStatesOf(cfg.Engine)
	if !ok {
		return fmt.Errorf("channel state events (StateEvents) need an engine that keeps channel occupancy for the cluster (memory, postgres, redis); %T does not", cfg.Engine)
	}
	if cfg.Handlers.OnChannelState == nil {
		return errors.New("channel state events (StateEvents) need Handlers.OnChannelState to deliver them to")
	}
	s.h, s.eng, s.deliver = h, eng, cfg.Handlers.OnChannelState
	s.opts = cfg.Channels.State.engineOptions()
	s.chans = make(map[string]*chanState)
	s.wake = make(chan struct{}, 1)
	s.delivered = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "channel", Name: "state_events_delivered_total",
		Help: "Channel state events (occupied, vacated) this node delivered: to the state proxy (channel.state_proxy), or to Handlers.OnChannelState where Herald is embedded.",
	})
	dropped := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: "herald", Subsystem: "channel", Name: "state_events_dropped_total",
		Help: "Channel state events waiting for delivery that this node's engine calls dropped, oldest first, to keep the queue within channel.state.queue_size (memory and Redis engines); one dropped while a delivery carried it counts only if that delivery failed.",
	}, s.dropped)
	h.metrics.collectors = append(h.metrics.collectors, s.delivered, dropped)
	return nil
}

// start runs the deliverer and the keeper; with events off, nothing.
func (s *channelStates) start() {
	if s.eng == nil {
		return
	}
	s.h.wg.Add(2)
	go s.deliverLoop()
	go s.keepLoop()
}

// changed tells channel state that ch, in a namespace with StateEvents,
// may have gained its first local subscriber or lost its last.
func (s *channelStates) changed(ch string) {
	if s.eng == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.chans[ch]
	if cs == nil {
		cs = &chanState{}
		s.chans[ch] = cs
	}
	if cs.busy {
		return // the running reconcile looks at the registry again when done
	}
	if cs.declared == s.h.subs.has(ch) {
		if !cs.declared {
			delete(s.chans, ch)
		}
		return
	}
	cs.busy = true
	s.h.goBackground(func() { s.reconcile(ch, cs) })
}

// reconcile calls the engine until its record of ch matches the registry.
// A failed call is left to the keeper, so an engine that is down does not
// make this loop spin.
func (s *channelStates) reconcile(ch string, cs *chanState) {
	h := s.h
	for {
		s.mu.Lock()
		want := h.subs.has(ch)
		if want == cs.declared {
			cs.busy, cs.failed = false, false
			if !want {
				delete(s.chans, ch)
			}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()

		ctx, cancel := context.WithTimeout(h.ctx, h.client.CommandTimeout)
		err := s.eng.SetChannelOccupancy(ctx, ch, want, s.opts)
		cancel()

		s.mu.Lock()
		if err != nil {
			cs.busy, cs.failed = false, true
			s.mu.Unlock()
			if h.ctx.Err() == nil {
				h.log.Error("channel state: record occupancy", "channel", ch, "occupied", want, "error", err)
			}
			return
		}
		cs.declared = want
		s.mu.Unlock()
		s.poke()
	}
}

// poke wakes the deliverer: this node made a change whose event may be
// waiting.
func (s *channelStates) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// deliverLoop hands the engine's events to the handler, now and then and
// whenever this node changed something, backing off while delivery fails.
func (s *channelStates) deliverLoop() {
	h := s.h
	defer h.wg.Done()
	t := time.NewTicker(channelStatePoll)
	defer t.Stop()
	var retry time.Duration
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
		backend, err := s.deliverAll()
		if err == nil {
			retry = 0
			continue
		}
		if h.ctx.Err() != nil {
			return
		}
		limit := channelStateEngineRetryMax
		if backend {
			limit = channelStateRetryMax
		}
		retry = min(max(2*retry, channelStatePoll), limit)
		h.log.Warn("channel state: deliver events", "error", err, "handler_failed", backend, "retry_in", retry)
		wait := time.NewTimer(retry/2 + rand.N(retry/2+1)) // jitter: nodes retry apart
		select {
		case <-h.ctx.Done():
			wait.Stop()
			return
		case <-wait.C:
		}
	}
}

// deliverAll delivers batches until the engine has fewer than a batch,
// or the hub stops. backend reports that the failure was the handler's.
func (s *channelStates) deliverAll() (backend bool, err error) {
	h := s.h
	deliver := func(ctx context.Context, evs []ChannelStateEvent) error {
		err := s.deliver(ctx, evs)
		backend = err != nil
		return err
	}
	for h.ctx.Err() == nil {
		// Not cancelled by Shutdown: a batch the backend has taken must
		// also be recorded as delivered, or another node sends it again.
		// The handler's own timeout bounds the call (the proxy's); this
		// one only keeps a stuck handler from holding delivery for ever.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(h.ctx), h.client.CommandTimeout)
		backend = false
		n, err := s.eng.DeliverChannelStates(ctx, channelStateBatch, deliver)
		cancel()
		if err != nil {
			return backend, err
		}
		s.delivered.Add(float64(n))
		if n < channelStateBatch {
			return false, nil
		}
	}
	return false, nil
}

// keepLoop renews this node's lease on its records, records them again if
// it lapsed, and retries the changes the engine failed to take.
func (s *channelStates) keepLoop() {
	h := s.h
	defer h.wg.Done()
	// The lease is renewed once a third of it has passed, seen on a tick
	// of at most a sixth of it: so at most half of it passes between
	// renewals (a tick of a second on a lease of 3 s renewed every 2 s,
	// leaving a busy node one second of slack).
	t := time.NewTicker(min(channelStateKeepTick, s.opts.NodeTTL/6))
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(last) >= s.opts.NodeTTL/3 {
			// The lease runs from when the engine took the renewal, so
			// from no earlier than now.
			start := time.Now()
			ctx, cancel := context.WithTimeout(h.ctx, h.client.CommandTimeout)
			lost, err := s.eng.KeepChannelOccupancy(ctx, s.opts.NodeTTL)
			cancel()
			switch {
			case err != nil:
				if h.ctx.Err() == nil {
					h.log.Warn("channel state: renew this node's lease", "error", err)
				}
			case lost:
				// Also the first renewal of a node, which had no lease:
				// then there is nothing to record again.
				if s.forgetDeclared() > 0 {
					h.log.Warn("channel state: this node's lease had lapsed; recording its channels again")
				}
				last = start
			default:
				last = start
			}
		}
		s.retryFailed()
	}
}

// forgetDeclared marks every channel as not recorded, so that reconcile
// records again those that still have subscribers, and says how many.
func (s *channelStates) forgetDeclared() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cs := range s.chans {
		cs.declared = false
		cs.failed = true
	}
	return len(s.chans)
}

// retryFailed reconciles the channels whose last engine call failed.
func (s *channelStates) retryFailed() {
	s.mu.Lock()
	var chans []string
	for ch, cs := range s.chans {
		if cs.failed && !cs.busy {
			chans = append(chans, ch)
		}
	}
	s.mu.Unlock()
	for _, ch := range chans {
		s.changed(ch)
	}
}

// release drops this node's records at Shutdown, once its clients are
// gone: its channels without other subscribers are vacated after the
// delay, as if each had lost its last subscriber.
func (s *channelStates) release(ctx context.Context) error {
	if s.eng == nil {
		return nil
	}
	if err := s.eng.ReleaseChannelOccupancy(ctx); err != nil {
		return fmt.Errorf("channel state: release this node's channels: %w", err)
	}
	return nil
}
