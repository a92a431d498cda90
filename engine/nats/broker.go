package nats

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/precheck"
	"github.com/heraldhq/herald/engine/internal/wire"
)

// fragmentOverhead is room left in each fragment for its header.
const fragmentOverhead = 256

// channelSub is this node's subscription to one channel (or to control
// messages). nats.go calls onMsg from one goroutine per subscription, in
// the order the server sent the messages.
type channelSub struct {
	e       *Engine
	name    string
	control bool
	sub     *nats.Subscription
	frags   reassembler
}

func (e *Engine) newReassembler() reassembler {
	return reassembler{timeout: e.opts.FragmentTimeout, maxSize: e.opts.MaxMessageSize}
}

func (cs *channelSub) onMsg(m *nats.Msg) {
	e := cs.e
	e.deliverMu.RLock()
	defer e.deliverMu.RUnlock()
	if e.life.Closed.Load() {
		return
	}
	data := m.Data
	if len(data) > 0 && data[0] == msgFragment {
		f, err := decodeFragment(data[1:])
		if err != nil {
			cs.malformed(err)
			return
		}
		msg, dropped := cs.frags.add(f, time.Now())
		if dropped {
			e.stats.dropped.Add(1)
			e.log.Warn("large message lost: not all of its fragments arrived", "channel", cs.name)
		}
		if msg == nil {
			return
		}
		data = msg
	}
	if len(data) == 0 {
		cs.malformed(errEmpty)
		return
	}
	if cs.control {
		if data[0] == msgControl {
			e.handler.HandleControl(data[1:])
		}
		return
	}
	switch data[0] {
	case msgPub:
		pub, err := wire.DecodePublication(data[1:])
		if err != nil {
			cs.malformed(err)
			return
		}
		e.handler.HandlePublication(cs.name, pub, engine.StreamPosition{})
	case msgJoin, msgLeave:
		info, err := wire.DecodeClientInfo(data[1:])
		if err != nil {
			cs.malformed(err)
			return
		}
		if data[0] == msgJoin {
			e.handler.HandleJoin(cs.name, info)
		} else {
			e.handler.HandleLeave(cs.name, info)
		}
	default:
		cs.malformed(fmt.Errorf("unknown message kind %q", data[0]))
	}
}

func (cs *channelSub) malformed(err error) {
	cs.e.stats.malformed.Add(1)
	cs.e.log.Error("undecodable NATS message", "channel", cs.name, "error", err)
}

// send publishes msg on subject, in fragments when it exceeds the
// server's max_payload. nats.go copies msg before returning.
func (e *Engine) send(subject string, msg []byte) error {
	limit := int(e.nc.MaxPayload())
	if len(msg) <= limit {
		return e.nc.Publish(subject, msg)
	}
	chunk := limit - fragmentOverhead
	if chunk <= 0 {
		return fmt.Errorf("server max_payload %d is too small", limit)
	}
	count := (len(msg) + chunk - 1) / chunk
	f := fragment{origin: e.origin, id: e.fragID.Add(1), count: uint64(count)}
	buf := e.bufs.Get()
	defer e.bufs.Put(buf)
	for i := range count {
		f.index = uint64(i)
		f.chunk = msg[i*chunk : min((i+1)*chunk, len(msg))]
		*buf = appendFragment((*buf)[:0], f)
		if err := e.nc.Publish(subject, *buf); err != nil {
			return fmt.Errorf("fragment %d of %d: %w", i+1, count, err)
		}
	}
	return nil
}

// Publish sends pub to the nodes subscribed to ch. It returns once the
// message is handed to the connection (buffered while reconnecting), so
// one goroutine's publications are delivered in the order it made them;
// delivery is at most once. Publications with history options fail with
// ErrNoHistory.
func (e *Engine) Publish(ctx context.Context, ch string, pub *engine.Publication, opts engine.PublishOptions) (engine.StreamPosition, error) {
	if pub == nil {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: nil publication", ch)
	}
	if ch == "" {
		return engine.StreamPosition{}, fmt.Errorf("publish: %w", errEmptyChannel)
	}
	if opts.IdempotencyKey != "" {
		// NATS core keeps nothing between messages to remember keys in.
		return engine.StreamPosition{}, fmt.Errorf("publish %q: %w", ch, engine.ErrIdempotencyUnsupported)
	}
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: %w", ch, err)
	}
	if opts.HasHistory() {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: %w", ch, ErrNoHistory)
	}
	p := *pub
	p.Time = time.Now().UnixMilli()
	buf := e.bufs.Get()
	defer e.bufs.Put(buf)
	*buf = wire.AppendPublication(append(*buf, msgPub), &p)
	if err := e.send(e.subj.channel(ch), *buf); err != nil {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: %w", ch, err)
	}
	return engine.StreamPosition{}, nil
}

// PublishJoin sends a join event to the nodes subscribed to ch.
func (e *Engine) PublishJoin(ctx context.Context, ch string, info *engine.ClientInfo) error {
	return e.publishInfo(ctx, msgJoin, ch, info)
}

// PublishLeave sends a leave event to the nodes subscribed to ch.
func (e *Engine) PublishLeave(ctx context.Context, ch string, info *engine.ClientInfo) error {
	return e.publishInfo(ctx, msgLeave, ch, info)
}

// publishInfo sends a join or leave on the channel's own subject, in
// order with the channel's publications.
func (e *Engine) publishInfo(ctx context.Context, kind byte, ch string, info *engine.ClientInfo) error {
	what, err := precheck.JoinLeave(ctx, &e.life, ErrNotStarted, kind == msgLeave, ch, info)
	if err != nil {
		return err
	}
	buf := e.bufs.Get()
	defer e.bufs.Put(buf)
	*buf = wire.AppendClientInfo(append(*buf, kind), info)
	if err := e.send(e.subj.channel(ch), *buf); err != nil {
		return fmt.Errorf("publish %s %q: %w", what, ch, err)
	}
	return nil
}

// PublishControl sends data to every node, this one included, or when node
// is set, on that node's own subject, which only it subscribes to.
func (e *Engine) PublishControl(ctx context.Context, data []byte, node string) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("publish control: %w", err)
	}
	buf := e.bufs.Get()
	defer e.bufs.Put(buf)
	*buf = append(append(*buf, msgControl), data...)
	subject := e.subj.control
	if node != "" {
		subject = e.subj.node(node)
	}
	if err := e.send(subject, *buf); err != nil {
		return fmt.Errorf("publish control: %w", err)
	}
	return nil
}

// Subscribe subscribes this node to ch and returns once the server has
// processed the subscription (a PING/PONG round trip).
func (e *Engine) Subscribe(ctx context.Context, ch string) error {
	if ch == "" {
		return fmt.Errorf("subscribe: %w", errEmptyChannel)
	}
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("subscribe %q: %w", ch, err)
	}
	e.mu.Lock()
	cs := e.subs[ch]
	created := cs == nil
	if created {
		cs = &channelSub{e: e, name: ch, frags: e.newReassembler()}
		sub, err := e.nc.Subscribe(e.subj.channel(ch), cs.onMsg)
		if err != nil {
			e.mu.Unlock()
			return fmt.Errorf("subscribe %q: %w", ch, err)
		}
		cs.sub = sub
		e.subs[ch] = cs
	}
	e.mu.Unlock()
	if err := e.flush(ctx); err != nil {
		if created {
			e.mu.Lock()
			if e.subs[ch] == cs {
				delete(e.subs, ch)
				_ = cs.sub.Unsubscribe()
			}
			e.mu.Unlock()
		}
		return fmt.Errorf("subscribe %q: %w", ch, err)
	}
	return nil
}

// Unsubscribe stops delivering ch on this node.
func (e *Engine) Unsubscribe(ctx context.Context, ch string) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("unsubscribe %q: %w", ch, err)
	}
	e.mu.Lock()
	cs := e.subs[ch]
	delete(e.subs, ch)
	e.mu.Unlock()
	if cs == nil {
		return nil
	}
	if err := cs.sub.Unsubscribe(); err != nil {
		return fmt.Errorf("unsubscribe %q: %w", ch, err)
	}
	return nil
}

// History fails with ErrNoHistory: NATS core keeps no streams.
func (e *Engine) History(ctx context.Context, ch string, _ engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition, error) {
	if err := e.life.Usable(ctx); err != nil {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: %w", ch, err)
	}
	return nil, engine.StreamPosition{}, fmt.Errorf("history %q: %w", ch, ErrNoHistory)
}

// RemoveHistory fails with ErrNoHistory, as History.
func (e *Engine) RemoveHistory(ctx context.Context, ch string) error {
	if err := e.life.Usable(ctx); err != nil {
		return fmt.Errorf("remove history %q: %w", ch, err)
	}
	return fmt.Errorf("remove history %q: %w", ch, ErrNoHistory)
}
