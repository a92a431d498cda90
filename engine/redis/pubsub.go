package redis

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
)

// subscriber is one subscribing connection and the channels it carries.
//
// go-redis re-establishes a lost pub/sub connection by itself and
// subscribes again to every channel it had; Redis confirms each channel
// with a "subscribe" reply, in order with the messages. Every SUBSCRIBE
// the engine sends leaves a waiter for its confirmation, so a confirmation
// nobody waits for is a re-subscription: publications may have been lost
// since the connection broke, and the channel is replayed from history at
// exactly that point of the message flow, before any message of the new
// connection.
type subscriber struct {
	e     *Engine
	index int // among the node's subscribers
	disp  *dispatcher

	mu sync.Mutex
	ps *goredis.PubSub
	// waiting holds, for each subscribed pub/sub channel, the Subscribe
	// calls waiting for their confirmation; a channel is subscribed while
	// it has an entry.
	waiting map[string][]chan struct{}
	closed  bool

	// lastSeen is when the connection last delivered anything (Unix ns),
	// for the health check.
	lastSeen atomic.Int64
}

func newSubscriber(e *Engine, index int) *subscriber {
	s := &subscriber{
		e:       e,
		index:   index,
		disp:    e.newDispatcher(),
		waiting: make(map[string][]chan struct{}),
	}
	s.ps = s.newPubSub()
	s.lastSeen.Store(time.Now().UnixNano())
	return s
}

// writeCtx bounds a write on the subscribing connection. It does not use
// the caller's context: a write cut short by a caller's deadline would
// make go-redis drop the connection and every channel on it re-subscribe.
func (s *subscriber) writeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.e.bgCtx, s.e.opts.ReadTimeout)
}

// subscribe subscribes to the pub/sub channel rch and waits until Redis
// confirms it, ctx ends or the engine closes.
func (s *subscriber) subscribe(ctx context.Context, rch string) error {
	w := make(chan struct{})
	wctx, cancel := s.writeCtx()
	defer cancel()
	s.mu.Lock()
	s.waiting[rch] = append(s.waiting[rch], w)
	err := s.ps.Subscribe(wctx, rch)
	s.mu.Unlock()
	if err != nil {
		s.forget(rch, w)
		return err
	}
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		s.forget(rch, w)
		return ctx.Err()
	case <-s.e.closing:
		return engine.ErrClosed
	}
}

// forget drops a waiter that gave up. Its confirmation, if it still comes,
// then counts as a re-subscription, which only costs a replay.
func (s *subscriber) forget(rch string, w chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ws, ok := s.waiting[rch]; ok {
		s.waiting[rch] = slices.DeleteFunc(ws, func(x chan struct{}) bool { return x == w })
	}
}

// unsubscribe unsubscribes from rch without waiting for Redis: messages
// that still arrive are dropped by the dispatcher.
func (s *subscriber) unsubscribe(rch string) error {
	ctx, cancel := s.writeCtx()
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.waiting[rch] {
		close(w)
	}
	delete(s.waiting, rch)
	return s.ps.Unsubscribe(ctx, rch)
}

// confirmed handles Redis's confirmation of a subscription to rch.
func (s *subscriber) confirmed(rch string) {
	s.mu.Lock()
	ws, ok := s.waiting[rch]
	if ok && len(ws) > 0 {
		close(ws[0])
		s.waiting[rch] = ws[1:]
	}
	s.mu.Unlock()
	if !ok || len(ws) > 0 || !s.e.keys.isChannel(rch) {
		return // unsubscribed since, an awaited confirmation, or control
	}
	s.e.stats.resubscribed.Add(1)
	s.disp.Resync(s.e.keys.channelOf(rch))
}

// run reads the connection until the engine closes, handing messages to
// the dispatcher. It does no other work, so the connection is drained as
// fast as Redis sends and Redis never drops it for a full output buffer
// because of a slow handler.
func (s *subscriber) run() {
	failures := 0
	for {
		s.mu.Lock()
		ps := s.ps
		s.mu.Unlock()
		msg, err := ps.Receive(s.e.bgCtx)
		if err != nil {
			if s.e.bgCtx.Err() != nil {
				return
			}
			if errors.Is(err, goredis.ErrClosed) {
				continue // replaced by the health check
			}
			failures++
			if failures == 1 {
				s.e.log.Warn("subscribing connection failed, reconnecting", "error", err)
			} else {
				s.e.log.Debug("subscribing connection still failing", "error", err, "attempts", failures)
			}
			if !s.e.pause(s.e.backoff(failures)) {
				return
			}
			continue
		}
		if failures > 0 {
			s.e.log.Info("subscribing connection re-established", "attempts", failures)
			failures = 0
		}
		s.lastSeen.Store(time.Now().UnixNano())
		switch m := msg.(type) {
		case *goredis.Message:
			s.route(m)
		case *goredis.Subscription:
			if m.Kind == "subscribe" {
				s.confirmed(m.Channel)
			}
		}
	}
}

func (s *subscriber) route(m *goredis.Message) {
	switch {
	case m.Channel == s.e.keys.control, m.Channel == s.e.ownControl:
		s.disp.Deliver("", m.Payload)
	case s.e.keys.isChannel(m.Channel):
		s.disp.Deliver(s.e.keys.channelOf(m.Channel), m.Payload)
	}
}

// check pings a connection that has been quiet for a health interval and
// replaces one that stayed quiet through two more. A broken connection
// fails its reads and reconnects without this; the check catches one
// that silently stopped delivering (a peer or middlebox that vanished).
func (s *subscriber) check(now time.Time) {
	interval := s.e.opts.HealthInterval
	idle := now.Sub(time.Unix(0, s.lastSeen.Load()))
	if idle < interval {
		return
	}
	s.mu.Lock()
	ps := s.ps
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(s.e.bgCtx, interval)
	err := ps.Ping(ctx)
	cancel()
	if err != nil && !s.e.cluster || idle < 3*interval {
		return // a failed write already makes go-redis reconnect
	}
	s.replace("subscribing connection stopped answering pings, replacing it")
}

// newPubSub makes the subscriber's pub/sub connection. In Redis Cluster
// it is pinned to one master: go-redis would otherwise reconnect it to the
// master of whichever of its channels comes first, and a message
// published on a third master travels to each master over a separate
// cluster-bus link, so a connection that moved to a master whose link
// lags would receive again messages it already had. A pinned connection
// reconnects to the same master; when that master stays unreachable the
// health check replaces the connection, pinning it to the master that
// owns the pin key then.
func (s *subscriber) newPubSub() *goredis.PubSub {
	if cc, ok := s.e.client.(*goredis.ClusterClient); ok {
		ctx, cancel := s.writeCtx()
		node, err := cc.MasterForKey(ctx, s.e.keys.pin(s.index))
		cancel()
		if err == nil {
			return node.Subscribe(s.e.bgCtx)
		}
		s.e.log.Warn("no master for a subscribing connection, letting go-redis pick one", "error", err)
	}
	return s.e.client.Subscribe(s.e.bgCtx)
}

// replace swaps in a new pub/sub connection subscribed to every channel;
// the confirmations then trigger replays as after any reconnect. why is
// the warning logged, before the write, so that the line marks when the
// need was noticed.
//
// The write on the new connection is bounded by the health interval, not
// ReadTimeout: when the path to Redis is a black hole the new connection's
// handshake hangs too, and a longer wait would hold s.mu (and with it the
// hub's subscribes on this connection) and delay the check of the other
// subscribing connections behind it. A write that fails costs nothing:
// go-redis keeps the channels and subscribes on its next connection.
func (s *subscriber) replace(why string) {
	ctx, cancel := context.WithTimeout(s.e.bgCtx, s.e.opts.HealthInterval)
	defer cancel()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	old := s.ps
	s.ps = s.newPubSub()
	channels := make([]string, 0, len(s.waiting))
	for rch := range s.waiting {
		channels = append(channels, rch)
	}
	// Logged before the write, so that the line marks when the silence
	// was noticed.
	s.e.log.Warn(why, "channels", len(channels))
	var err error
	if len(channels) > 0 {
		// go-redis remembers the channels even if this write fails, and
		// subscribes on its next connection.
		err = s.ps.Subscribe(ctx, channels...)
	}
	s.lastSeen.Store(time.Now().UnixNano())
	s.mu.Unlock()
	_ = old.Close()
	s.e.stats.replaced.Add(1)
	if err != nil {
		s.e.log.Debug("subscribe on the replacing connection failed; go-redis retries on its next connection", "error", err)
	}
}

// close closes the connection, which ends run once the engine's
// background context is cancelled.
func (s *subscriber) close() {
	s.mu.Lock()
	s.closed = true
	ps := s.ps
	s.mu.Unlock()
	_ = ps.Close()
}

// runHealth checks the connection each health interval. Each subscriber
// runs its own loop, so that a check go-redis holds up delays only its own
// connection's: a ping waits for the PubSub's lock, which go-redis keeps
// while it re-establishes the connection, through a handshake that waits
// as long as Redis does not answer (paused, or a black hole), past the
// ping's deadline. With one loop for all, the other connections' silence
// went unnoticed for as long.
func (s *subscriber) runHealth() {
	t := time.NewTicker(s.e.opts.HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-s.e.closing:
			return
		case now := <-t.C:
			s.check(now)
		}
	}
}
