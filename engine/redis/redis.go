// Package redis is the engine that scales Herald out on Redis (standalone,
// Sentinel or Cluster), through go-redis.
//
// Publications, join/leave events and control messages travel through
// Redis pub/sub. A node subscribes only to the channels it has subscribers
// on, spread over a few subscribing connections. History lives in one Redis
// stream per channel, whose entry ids are the offsets, next to a meta hash
// with the top offset and the epoch; a Lua script allocates the offset,
// appends, trims, sets the TTLs and publishes in one atomic step, so every
// subscriber sees a channel's publications in offset order. Presence is a
// hash and a sorted set of expiry times per channel.
//
// Delivery is at most once on the wire. For channels with history a node
// remembers the last offset it delivered: a publication that arrives after
// a gap, or a subscribing connection that was re-established, makes it read
// the missing publications from the stream and deliver them, in order and
// without duplicates, before anything newer. Channels without history lose
// what was published while a connection was down. docs/engines.md compares
// the engines.
package redis

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/precheck"
	"github.com/heraldhq/herald/engine/internal/wire"
)

// ErrNotStarted is returned by delivering calls made before Start.
var ErrNotStarted = errors.New("redis engine not started")

// errEmptyChannel rejects the empty channel name.
var errEmptyChannel = precheck.ErrEmptyChannel

// Engine is the Redis engine.Engine. Create it with New.
type Engine struct {
	presenceStore

	opts Config
	log  *slog.Logger
	keys keyspace
	// ownControl is this node's pub/sub channel for control messages
	// addressed to it alone.
	ownControl string
	client     goredis.UniversalClient
	// cluster is set when client talks to a Redis Cluster.
	cluster bool
	seed    maphash.Seed
	subs    []*subscriber
	// switches follows the Sentinels' master switches (Sentinel only).
	switches switchWatch
	bufs     wire.Buffers
	stats    counters
	csBound  channelStateBound

	life precheck.State // closed and started

	lifecycleMu sync.Mutex
	started     bool
	stopped     bool
	bgCtx       context.Context
	bgCancel    context.CancelFunc
	// closing is closed when Close begins, waking everything that waits.
	closing chan struct{}
	workers sync.WaitGroup
}

var _ engine.Engine = (*Engine)(nil)

// counters are the engine's running totals, for Stats.
type counters struct {
	resubscribed atomic.Uint64
	replaced     atomic.Uint64
	gapRepairs   atomic.Uint64
	replayed     atomic.Uint64
	lost         atomic.Uint64
	malformed    atomic.Uint64
}

// Stats are running totals since the engine was made.
type Stats struct {
	// Resubscribed counts channels whose subscription was re-established
	// after a subscribing connection was lost, each followed by a replay.
	Resubscribed uint64
	// Replaced counts subscribing connections replaced because they stopped
	// answering pings.
	Replaced uint64
	// GapRepairs counts live publications that arrived after a gap.
	GapRepairs uint64
	// Replayed counts publications delivered from history by gap repairs
	// and replays.
	Replayed uint64
	// Lost counts publications a repair or replay needed but history no
	// longer held (trimmed or expired); their subscribers must recover.
	Lost uint64
	// Malformed counts pub/sub messages that could not be decoded.
	Malformed uint64
}

// New checks opts, connects and pings Redis. Delivery starts with Start.
func New(ctx context.Context, opts Config) (*Engine, error) {
	opts, client, err := opts.connect(ctx, "redis engine")
	if err != nil {
		return nil, err
	}
	e := &Engine{
		opts:       opts,
		log:        opts.Logger.With("engine", "redis", "node", opts.NodeID),
		keys:       newKeyspace(opts.Prefix),
		ownControl: newKeyspace(opts.Prefix).nodeControl(opts.NodeID),
		client:     client,
		seed:       maphash.MakeSeed(),
		cluster:    isCluster(client),
		closing:    make(chan struct{}),
	}
	e.presenceStore = presenceStore{client: client, keys: e.keys, closed: &e.life.Closed}
	return e, nil
}

// NodeID is this node's id: its connection name and the address of its
// own control channel.
func (e *Engine) NodeID() string { return e.opts.NodeID }

// Stats returns the engine's running totals.
func (e *Engine) Stats() Stats {
	return Stats{
		Resubscribed: e.stats.resubscribed.Load(),
		Replaced:     e.stats.replaced.Load(),
		GapRepairs:   e.stats.gapRepairs.Load(),
		Replayed:     e.stats.replayed.Load(),
		Lost:         e.stats.lost.Load(),
		Malformed:    e.stats.malformed.Load(),
	}
}

// Start opens the subscribing connections and subscribes to control
// messages. It returns once control messages and
// publications on subscribed channels will reach h.
func (e *Engine) Start(ctx context.Context, h engine.Handler) error {
	if h == nil {
		return errors.New("start redis engine: nil handler")
	}
	e.lifecycleMu.Lock()
	defer e.lifecycleMu.Unlock()
	if e.life.Closed.Load() {
		return fmt.Errorf("start redis engine: %w", engine.ErrClosed)
	}
	if e.started {
		return errors.New("start redis engine: already started")
	}
	if err := e.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("start redis engine: ping: %w", err)
	}
	e.started = true
	e.bgCtx, e.bgCancel = context.WithCancel(context.Background())
	e.subs = make([]*subscriber, e.opts.PubSubShards)
	for i := range e.subs {
		e.subs[i] = newSubscriber(e, i)
		e.workers.Go(e.subs[i].run)
		e.workers.Go(e.subs[i].runHealth)
		d := e.subs[i].disp
		e.workers.Go(func() { d.Run(h) })
	}
	e.workers.Go(e.runMapJanitor)
	if e.opts.SentinelMaster != "" {
		e.watchSentinels()
	}
	for _, rch := range []string{e.keys.control, e.ownControl} {
		if err := e.subs[0].subscribe(ctx, rch); err != nil {
			e.stopLocked()
			return fmt.Errorf("start redis engine: subscribe to control messages (%s): %w", rch, err)
		}
	}
	e.life.Ready.Store(true)
	return nil
}

// Close stops delivery, waits for deliveries in progress and closes the
// connections. Later calls return engine.ErrClosed; closing twice is
// harmless.
func (e *Engine) Close() error {
	e.lifecycleMu.Lock()
	defer e.lifecycleMu.Unlock()
	if e.life.Closed.Swap(true) {
		return nil
	}
	if e.started {
		e.stopLocked()
	}
	if err := e.client.Close(); err != nil {
		return fmt.Errorf("close redis engine: %w", err)
	}
	return nil
}

// stopLocked stops the goroutines Start started, once; lifecycleMu is
// held. After a failed Start it leaves the engine waiting for Close.
func (e *Engine) stopLocked() {
	if e.stopped {
		return
	}
	e.stopped = true
	e.life.Ready.Store(false)
	close(e.closing)
	e.bgCancel()
	e.closeSentinelWatch()
	for _, s := range e.subs {
		s.close()
		s.disp.Stop()
	}
	e.workers.Wait()
}

// subscriberOf returns the subscribing connection that carries ch.
func (e *Engine) subscriberOf(ch string) *subscriber {
	return e.subs[maphash.String(e.seed, ch)%uint64(len(e.subs))]
}

// pause waits d, or less when the engine closes; it reports whether the
// engine is still open.
func (e *Engine) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-e.closing:
		return false
	case <-t.C:
		return true
	}
}

// backoff is the wait before retry number n (from 1): exponential from
// ReconnectMin to ReconnectMax, with jitter so nodes do not retry in step.
func (e *Engine) backoff(n int) time.Duration {
	d := e.opts.ReconnectMin
	for i := 1; i < n && d < e.opts.ReconnectMax; i++ {
		d *= 2
	}
	d = min(d, e.opts.ReconnectMax)
	var b [1]byte
	_, _ = rand.Read(b[:])
	return d/2 + d*time.Duration(b[0])/512
}

// newEpoch names a new stream. It is random so that a stream recreated at
// any time, by any node, gets an epoch it never had.
func newEpoch() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// millis converts a TTL to whole milliseconds, rounding up so that a
// positive TTL never becomes 0 (which Redis reads as "expire now").
func millis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
