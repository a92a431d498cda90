package hub

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/heraldhq/herald/engine"
)

// interest keeps the engine told which channels this node has subscribers
// in, without holding a lock across the engine call.
//
// The registry (registry.go) says which channels have local subscribers
// now; interest makes the engine follow it. Per channel, one goroutine at a
// time calls engine.Subscribe or engine.Unsubscribe, then looks at the
// registry again, until the engine's state matches it: so a last
// unsubscribe and a new first subscribe reach the engine in the order they
// happened, and a subscriber waiting for its channel waits on a channel of
// its own, not on a lock another channel's I/O could hold.
type interest struct {
	h *Hub
	// posSub is the engine's PositionSubscriber, nil without one: a round
	// that subscribes for a waiter who needs the stream's position then
	// reads it in the same step, and the waiter's reply needs no read of
	// its own (centrifuge-python's TestAutoRecovery disconnects a client
	// a few milliseconds after its subscribe, and a reply later than that
	// leaves the subscription without a position).
	posSub engine.PositionSubscriber
	mu     sync.Mutex
	chans  map[string]*chanInterest
}

// chanInterest is one channel's state with the engine.
type chanInterest struct {
	// subscribed: the engine has confirmed interest in the channel.
	subscribed bool
	// busy: a goroutine is bringing the engine in line with the registry.
	busy bool
	// waiters are subscribers waiting for the engine to confirm interest.
	waiters []*waiter
}

// waiter is one subscriber waiting in await.
type waiter struct {
	done chan error
	// metaTTL, when set, asks for the stream's position (History with
	// Limit 0 and this MetaTTL).
	metaTTL *time.Duration
	// pos is the position the engine returned when it subscribed for
	// this waiter; nil when it did not (the channel was subscribed
	// already, or the engine reads no position). Written under
	// interest.mu before done is sent on.
	pos *engine.StreamPosition
}

func (in *interest) init(h *Hub) {
	in.h = h
	in.posSub, _ = engine.PositionSubscriberOf(h.engine)
	in.chans = make(map[string]*chanInterest)
}

// await waits until the engine has interest in ch, which must have a
// subscriber in the registry. It returns the engine's error if subscribing
// failed, or ctx's. With metaTTL set it also returns the stream's position
// when the engine read it while subscribing for this call, nil otherwise:
// every publication above that position reaches the subscriber, which was
// in the registry before the read.
func (in *interest) await(ctx context.Context, ch string, metaTTL *time.Duration) (*engine.StreamPosition, error) {
	in.mu.Lock()
	ci := in.chans[ch]
	if ci == nil {
		ci = &chanInterest{}
		in.chans[ch] = ci
	}
	if ci.subscribed && !ci.busy {
		in.mu.Unlock()
		return nil, nil
	}
	w := &waiter{done: make(chan error, 1), metaTTL: metaTTL}
	ci.waiters = append(ci.waiters, w)
	in.startLocked(ch, ci)
	in.mu.Unlock()
	select {
	case err := <-w.done:
		if err != nil {
			return nil, err
		}
		return w.pos, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for engine subscribe of %q: %w", ch, ctx.Err())
	}
}

// changed tells interest that ch lost its last local subscriber.
func (in *interest) changed(ch string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if ci := in.chans[ch]; ci != nil {
		in.startLocked(ch, ci)
	}
}

func (in *interest) startLocked(ch string, ci *chanInterest) {
	if ci.busy {
		return // the running reconcile looks at the registry again when done
	}
	ci.busy = true
	in.h.goBackground(func() { in.reconcile(ch, ci) })
}

// reconcile calls the engine until its interest in ch matches the
// registry. A failed subscribe is reported to the subscribers waiting at
// that moment, who give up their subscriptions; it is not retried here, so
// an engine that is down does not make this loop spin.
func (in *interest) reconcile(ch string, ci *chanInterest) {
	h := in.h
	for {
		// The registry is read under in.mu: a subscriber that leaves after
		// this read calls changed, which waits for in.mu and then finds
		// ci not busy, so it starts the next round itself.
		in.mu.Lock()
		want := h.subs.has(ch)
		if want == ci.subscribed {
			ci.busy = false
			if want {
				notify(ci, nil)
			} else if len(ci.waiters) == 0 {
				delete(in.chans, ch)
			}
			in.mu.Unlock()
			return
		}
		// Only the waiters here now were in the registry before the
		// engine reads the position; later ones wait for this round but
		// read their own.
		asked := positionWaiters(in.posSub, want, ci.waiters)
		in.mu.Unlock()

		ctx, cancel := context.WithTimeout(h.ctx, h.client.CommandTimeout)
		var (
			err error
			pos engine.StreamPosition
		)
		switch {
		case len(asked) > 0:
			pos, err = in.posSub.SubscribePosition(ctx, ch, *asked[0].metaTTL)
		case want:
			err = h.engine.Subscribe(ctx, ch)
		default:
			err = h.engine.Unsubscribe(ctx, ch)
		}
		cancel()

		in.mu.Lock()
		switch {
		case err == nil:
			for _, w := range asked {
				w.pos = &pos
			}
			if !want {
				// Publications were not delivered for a moment: a
				// position read before is no longer a subscriber's.
				for _, w := range ci.waiters {
					w.pos = nil
				}
			}
			ci.subscribed = want
		case want:
			ci.busy = false
			notify(ci, fmt.Errorf("engine subscribe %q: %w", ch, err))
			in.mu.Unlock()
			return
		default:
			// The engine may still deliver the channel; that costs a
			// lookup per publication and nothing else. Forget it, so a
			// later subscriber subscribes again.
			if h.ctx.Err() == nil {
				h.log.Error("engine unsubscribe", "channel", ch, "error", err)
			}
			ci.subscribed = false
		}
		in.mu.Unlock()
	}
}

// positionWaiters returns the waiters of a round that subscribes (want)
// who ask for the stream's position, when the engine can read it while
// subscribing (ps not nil).
func positionWaiters(ps engine.PositionSubscriber, want bool, waiters []*waiter) []*waiter {
	if ps == nil || !want {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(waiters), func(w *waiter) bool { return w.metaTTL == nil })
}

// notify answers every waiter of ci.
func notify(ci *chanInterest, err error) {
	for _, w := range ci.waiters {
		w.done <- err
	}
	ci.waiters = nil
}

// addSubscriber registers s and returns once the engine delivers its
// channel to this node. With metaTTL set it returns the stream's position
// when the engine read it while subscribing for s (see interest.await).
func (h *Hub) addSubscriber(ctx context.Context, c *Client, s *subscription, metaTTL *time.Duration) (*engine.StreamPosition, error) {
	s.filter = h.filters.Intern(s.filter)
	h.swapCompaction(s.channel, s, nil)
	_, replaced := h.subs.add(c, s)
	h.deltas.swap(s.channel, s, replaced)
	h.swapCompaction(s.channel, nil, replaced)
	if replaced != nil {
		h.filters.Release(replaced.filter)
	}
	pos, err := h.interest.await(ctx, s.channel, metaTTL)
	if err != nil {
		h.removeSubscriber(c, s.channel)
		return nil, err
	}
	if s.rule != nil && s.rule.StateEvents {
		h.chstate.changed(s.channel) // channelstate.go
	}
	return pos, nil
}

// removeSubscriber unregisters c from ch; the engine is told in the
// background when ch has no local subscriber left.
func (h *Hub) removeSubscriber(c *Client, ch string) {
	removed, last := h.subs.remove(c, ch)
	h.deltas.swap(ch, nil, removed)
	h.swapCompaction(ch, nil, removed)
	if removed != nil {
		h.filters.Release(removed.filter)
	}
	if last {
		h.interest.changed(ch)
		if removed != nil && removed.rule != nil && removed.rule.StateEvents {
			h.chstate.changed(ch) // channelstate.go
		}
	}
}

// goBackground runs fn on a goroutine that Shutdown waits for before it
// closes the engine.
func (h *Hub) goBackground(fn func()) {
	h.bg.add()
	go func() {
		defer h.bg.done()
		fn()
	}()
}

// background counts the goroutines of goBackground. Unlike a WaitGroup it
// may gain work while Shutdown waits: a transport may close a client (and
// so start its leave events) at any time.
type background struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed while n is 0; nil before the first add
}

func (b *background) add() {
	b.mu.Lock()
	if b.n == 0 {
		b.zero = make(chan struct{})
	}
	b.n++
	b.mu.Unlock()
}

func (b *background) done() {
	b.mu.Lock()
	b.n--
	if b.n == 0 {
		close(b.zero)
	}
	b.mu.Unlock()
}

// wait returns when the count is next zero, or with ctx's error.
func (b *background) wait(ctx context.Context) error {
	b.mu.Lock()
	z := b.zero
	b.mu.Unlock()
	if z == nil {
		return nil
	}
	select {
	case <-z:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
