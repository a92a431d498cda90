// Package nats is the engine that carries publications, join/leave events
// and control messages between Herald nodes through NATS core pub/sub,
// through nats.go.
//
// NATS core keeps nothing: the engine has no history, offsets or epochs,
// and delivery is at most once (what is published while a node is
// disconnected from NATS is lost to that node). History, RemoveHistory and
// Publish with history options return ErrNoHistory, and configuration must
// keep history, positioning and recovery off the namespaces of a
// deployment on NATS. Presence is served by Config.Presence, normally a
// Redis presence store, or fails with ErrNoPresence. docs/engines.md
// explains the choice and compares the engines.
//
// A node subscribes to the subject of each channel it has subscribers on;
// messages larger than the server's max_payload travel as fragments.
package nats

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/precheck"
	"github.com/heraldhq/herald/engine/internal/wire"
)

// ErrNotStarted is returned by delivering calls made before Start.
var ErrNotStarted = errors.New("nats engine not started")

var errEmptyChannel = precheck.ErrEmptyChannel

// Engine is the NATS engine.Engine. Create it with New.
type Engine struct {
	opts Config
	log  *slog.Logger
	subj subjects
	nc   *nats.Conn
	// origin and fragID name the fragments of this node's large messages.
	origin string
	fragID atomic.Uint64
	bufs   wire.Buffers
	stats  counters

	handler engine.Handler

	mu   sync.Mutex // guards subs
	subs map[string]*channelSub

	// deliverMu is held for reading by every handler call, so Close can
	// wait for the calls in progress.
	deliverMu sync.RWMutex
	life      precheck.State // closed and started

	lifecycleMu sync.Mutex
	started     bool
}

var _ engine.Engine = (*Engine)(nil)

type counters struct {
	disconnects atomic.Uint64
	reconnects  atomic.Uint64
	dropped     atomic.Uint64
	malformed   atomic.Uint64
}

// Stats are running totals since the engine was made.
type Stats struct {
	Disconnects uint64
	Reconnects  uint64
	// Dropped counts messages lost on this node: slow-consumer drops and
	// large messages whose fragments did not all arrive.
	Dropped   uint64
	Malformed uint64
}

// New checks opts and connects to NATS. Delivery starts with Start. ctx
// bounds the connection attempt.
func New(ctx context.Context, opts Config) (*Engine, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{
		opts:   opts,
		log:    opts.Logger.With("engine", "nats", "node", opts.NodeID),
		subj:   newSubjects(opts.Prefix),
		origin: randomToken(8),
		subs:   make(map[string]*channelSub),
	}
	dial := opts.DialTimeout
	if dl, ok := ctx.Deadline(); ok {
		dial = min(dial, time.Until(dl))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("nats engine: connect: %w", err)
	}
	connOpts := append([]nats.Option{
		nats.Name("herald:" + opts.NodeID),
		nats.Timeout(dial),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(opts.ReconnectWait),
		nats.PingInterval(opts.PingInterval),
		nats.DisconnectErrHandler(e.onDisconnect),
		nats.ReconnectHandler(e.onReconnect),
		nats.ErrorHandler(e.onAsyncError),
	}, opts.ConnOptions...)
	if opts.TLS != nil {
		connOpts = append(connOpts, nats.Secure(opts.TLS))
	}
	if e.nc, err = nats.Connect(opts.URL, connOpts...); err != nil {
		return nil, fmt.Errorf("nats engine: connect: %w", err)
	}
	return e, nil
}

// NodeID is this node's id: its connection's name and the address of its
// own control subject.
func (e *Engine) NodeID() string { return e.opts.NodeID }

// Stats returns the engine's running totals.
func (e *Engine) Stats() Stats {
	return Stats{
		Disconnects: e.stats.disconnects.Load(),
		Reconnects:  e.stats.reconnects.Load(),
		Dropped:     e.stats.dropped.Load(),
		Malformed:   e.stats.malformed.Load(),
	}
}

func (e *Engine) onDisconnect(_ *nats.Conn, err error) {
	if e.life.Closed.Load() {
		return
	}
	e.stats.disconnects.Add(1)
	e.log.Warn("disconnected from NATS, reconnecting; messages published meanwhile are lost to this node", "error", err)
}

func (e *Engine) onReconnect(nc *nats.Conn) {
	e.stats.reconnects.Add(1)
	e.log.Info("reconnected to NATS", "server", nc.ConnectedUrlRedacted())
}

func (e *Engine) onAsyncError(_ *nats.Conn, sub *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrSlowConsumer) {
		e.stats.dropped.Add(1)
		subject := ""
		if sub != nil {
			subject = sub.Subject
		}
		e.log.Warn("handler too slow, NATS client dropped messages", "subject", subject)
		return
	}
	e.log.Error("NATS error", "error", err)
}

// Start subscribes to control messages and begins delivering to h. It
// returns once the server has the control subscription.
func (e *Engine) Start(ctx context.Context, h engine.Handler) error {
	if h == nil {
		return errors.New("start nats engine: nil handler")
	}
	e.lifecycleMu.Lock()
	defer e.lifecycleMu.Unlock()
	if e.life.Closed.Load() {
		return fmt.Errorf("start nats engine: %w", engine.ErrClosed)
	}
	if e.started {
		return errors.New("start nats engine: already started")
	}
	e.handler = h
	// Two subscriptions: control messages to every node, and those to this
	// node alone. Each reassembles its own fragments.
	var ctrls []*nats.Subscription
	unsubscribe := func() {
		for _, s := range ctrls {
			_ = s.Unsubscribe()
		}
	}
	for _, subject := range []string{e.subj.control, e.subj.node(e.opts.NodeID)} {
		ctrl := &channelSub{e: e, name: subject, control: true, frags: e.newReassembler()}
		sub, err := e.nc.Subscribe(subject, ctrl.onMsg)
		if err != nil {
			unsubscribe()
			return fmt.Errorf("start nats engine: subscribe to control messages (%s): %w", subject, err)
		}
		ctrl.sub = sub
		ctrls = append(ctrls, sub)
	}
	if err := e.flush(ctx); err != nil {
		unsubscribe()
		return fmt.Errorf("start nats engine: subscribe to control messages: %w", err)
	}
	e.started = true
	e.life.Ready.Store(true)
	return nil
}

// Close flushes what this node published, closes the connection and waits
// for handler calls in progress. Later calls return engine.ErrClosed;
// closing twice is harmless. It does not close Config.Presence.
func (e *Engine) Close() error {
	e.lifecycleMu.Lock()
	defer e.lifecycleMu.Unlock()
	if e.life.Closed.Load() {
		return nil
	}
	if e.nc.IsConnected() {
		if err := e.nc.FlushTimeout(time.Second); err != nil {
			e.log.Debug("flush before close", "error", err)
		}
	}
	e.life.Closed.Store(true)
	e.life.Ready.Store(false)
	e.nc.Close()
	e.deliverMu.Lock()
	//lint:ignore SA2001 the empty critical section is the wait
	e.deliverMu.Unlock()
	return nil
}

// flush waits until the server has processed everything sent so far.
func (e *Engine) flush(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.opts.FlushTimeout)
		defer cancel()
	}
	return e.nc.FlushWithContext(ctx)
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails since Go 1.24
	return hex.EncodeToString(b)
}
