// Package memory is the single-node engine: it delivers publications, join
// and leave events and control messages straight to the node's own handler,
// and keeps history and presence in process memory. A restart loses both,
// and streams come back with new epochs, so clients notice the loss.
package memory

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/precheck"
)

// ErrNotStarted is returned by delivering calls made before Start.
var ErrNotStarted = errors.New("memory engine not started")

// Engine is the in-memory engine.Engine. Create it with New.
//
// Publications handed to the Handler and returned by History are shared
// with the engine's history and must be treated as read-only; likewise
// the engine keeps the ClientInfo passed to AddPresence and returns it from
// Presence, so callers must not change it afterwards.
//
// The handler runs synchronously inside Publish, PublishJoin, PublishLeave
// and PublishControl, holding the channel's stripe lock: it must not call
// those methods itself, or it deadlocks.
type Engine struct {
	opts   Config
	seed   maphash.Seed
	shards []shard
	// idemHeld counts the idempotency keys all shards hold, against
	// Options.IdempotencyKeys.
	idemHeld atomic.Int64
	// store is the engine's engine.Store, apart from the channel shards.
	store storeState
	// rates is the engine's engine.RateLimiter (ratelimit.go).
	rates rateState
	// chstate is the engine's engine.ChannelStates (channelstate.go).
	chstate channelStateState

	// controlMu orders control messages as publishers sent them, and lets
	// Close wait for a control delivery in flight.
	controlMu sync.Mutex

	// handler is set once, before life.Ready, which every delivering call
	// checks first.
	handler engine.Handler
	life    precheck.State

	// lifecycleMu guards started and the janitor's channels.
	lifecycleMu sync.Mutex
	started     bool
	stop        chan struct{}
	stopped     chan struct{}
}

var _ engine.Engine = (*Engine)(nil)

// shard is one lock stripe: the channels hashing to it share pubMu, which
// is held while a publication's offset is allocated and its handler call
// runs, so one channel's handler calls come in offset order while other
// shards proceed in parallel.
type shard struct {
	pubMu    sync.Mutex
	history  historyShard
	presence presenceShard
	idem     idempotencyCache // under pubMu
	maps     mapShard         // under pubMu
}

// New returns an engine with opts' zero fields set to their defaults. It
// delivers nothing until Start.
func New(opts Config) *Engine {
	opts = opts.withDefaults()
	e := &Engine{
		opts:   opts,
		seed:   maphash.MakeSeed(),
		shards: make([]shard, opts.Shards),
	}
	for i := range e.shards {
		e.shards[i].history.streams = make(map[string]*stream)
		e.shards[i].presence.channels = make(map[string]map[string]*presenceEntry)
	}
	return e
}

func (e *Engine) shard(ch string) *shard {
	return &e.shards[maphash.String(e.seed, ch)%uint64(len(e.shards))]
}

// Start begins delivering to h and starts the janitor that cleans expired
// history and presence.
func (e *Engine) Start(ctx context.Context, h engine.Handler) error {
	if h == nil {
		return errors.New("start memory engine: nil handler")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("start memory engine: %w", err)
	}
	e.lifecycleMu.Lock()
	defer e.lifecycleMu.Unlock()
	if e.life.Closed.Load() {
		return fmt.Errorf("start memory engine: %w", engine.ErrClosed)
	}
	if e.started {
		return errors.New("start memory engine: already started")
	}
	e.started = true
	e.handler = h
	e.stop = make(chan struct{})
	e.stopped = make(chan struct{})
	go e.runJanitor(e.stop, e.stopped)
	e.life.Ready.Store(true)
	return nil
}

// Close stops the janitor and waits for deliveries in flight; after it
// returns the handler is not called again and every method returns
// engine.ErrClosed. Closing twice is harmless.
func (e *Engine) Close() error {
	e.lifecycleMu.Lock()
	defer e.lifecycleMu.Unlock()
	if e.life.Closed.Swap(true) {
		return nil
	}
	// Deliveries check closed while holding their stripe's lock, so taking
	// each lock once waits out those that began before closed was set.
	for i := range e.shards {
		e.shards[i].pubMu.Lock()
		//lint:ignore SA2001 the empty critical section is the wait
		e.shards[i].pubMu.Unlock()
	}
	e.controlMu.Lock()
	//lint:ignore SA2001 as above
	e.controlMu.Unlock()
	if e.started {
		close(e.stop)
		<-e.stopped
	}
	return nil
}

// deliverer returns the handler for a delivering call. The caller holds the
// stripe lock that Close takes, so a nil error means Close waits for the
// delivery.
func (e *Engine) deliverer(ctx context.Context) (engine.Handler, error) {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return nil, err
	}
	return e.handler, nil
}

func (e *Engine) now() int64 { return e.opts.Now().UnixNano() }

// Subscribe does nothing: every publication reaches this node's handler.
func (e *Engine) Subscribe(ctx context.Context, _ string) error { return e.life.Usable(ctx) }

// SubscribePosition is History with Limit 0: Subscribe has nothing to do
// (engine.PositionSubscriber).
func (e *Engine) SubscribePosition(ctx context.Context, ch string, metaTTL time.Duration) (engine.StreamPosition, error) {
	_, sp, err := e.History(ctx, ch, engine.HistoryRequest{MetaTTL: metaTTL})
	if err != nil {
		return engine.StreamPosition{}, fmt.Errorf("subscribe: %w", err)
	}
	return sp, nil
}

// Unsubscribe does nothing, as Subscribe.
func (e *Engine) Unsubscribe(ctx context.Context, _ string) error { return e.life.Usable(ctx) }

// sweep runs one janitor tick: each shard handles at most JanitorBatch due
// streams and JanitorBatch due presence entries. It returns how many
// deadlines it handled.
func (e *Engine) sweep() int {
	now := e.now()
	n := 0
	for i := range e.shards {
		n += e.shards[i].history.sweep(now, e.opts.JanitorBatch)
		n += e.shards[i].presence.sweep(now, e.opts.JanitorBatch)
		sh := &e.shards[i]
		sh.pubMu.Lock()
		n += sh.idem.expire(now, e.opts.JanitorBatch, &e.idemHeld)
		sh.pubMu.Unlock()
		n += e.expireMapKeys(sh, now, e.opts.JanitorBatch)
	}
	n += e.store.sweep(e.opts.Now(), e.opts.JanitorBatch)
	return n
}

// mapExpiryInterval is how often the janitor looks for map keys whose TTL
// passed, unless JanitorInterval is shorter: a key is removed within about
// this long of its expiry, however many expire together (drainMapKeys).
const mapExpiryInterval = 100 * time.Millisecond

func (e *Engine) runJanitor(stop <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	t := time.NewTicker(e.opts.JanitorInterval)
	defer t.Stop()
	m := time.NewTicker(min(e.opts.JanitorInterval, mapExpiryInterval))
	defer m.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			e.sweep()
		case <-m.C:
			e.drainMapKeys()
		}
	}
}

// drainMapKeys removes every map key due now, in batches of JanitorBatch
// per shard (each under its shard's lock, released between batches), and
// returns how many deadlines it handled. Removals are changes that
// subscribers wait for: 30,000 keys expiring together were removed up to
// 30 s late at one batch per shard and second.
func (e *Engine) drainMapKeys() int {
	now := e.now()
	total := 0
	for {
		more := false
		for i := range e.shards {
			n := e.expireMapKeys(&e.shards[i], now, e.opts.JanitorBatch)
			total += n
			more = more || n == e.opts.JanitorBatch
		}
		if !more {
			return total
		}
	}
}
