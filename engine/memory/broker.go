package memory

import (
	"context"
	"fmt"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/precheck"
)

// Publish delivers a copy of pub, stamped with its offset and time, to the
// handler before returning. With history, the offset is allocated and the
// handler called under the channel's stripe lock, so concurrent publishers
// to one channel still deliver in offset order.
func (e *Engine) Publish(ctx context.Context, ch string, pub *engine.Publication, opts engine.PublishOptions) (engine.StreamPosition, error) {
	if pub == nil {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: nil publication", ch)
	}
	sh := e.shard(ch)
	sh.pubMu.Lock()
	defer sh.pubMu.Unlock()
	h, err := e.deliverer(ctx)
	if err != nil {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: %w", ch, err)
	}
	now := e.opts.Now()
	if key := opts.IdempotencyKey; key != "" {
		if opts.IdempotentResultTTL <= 0 {
			return engine.StreamPosition{}, fmt.Errorf("publish %q: idempotency key without a positive IdempotentResultTTL", ch)
		}
		// Under the shard's publish lock: a retry racing the first waits
		// for it, then finds its result.
		if sp, ok := sh.idem.lookup(ch, key, now.UnixNano()); ok {
			return sp, nil
		}
		if err := sh.idem.reserve(now.UnixNano(), e.opts.JanitorBatch, &e.idemHeld, e.opts.IdempotencyKeys); err != nil {
			return engine.StreamPosition{}, fmt.Errorf("publish %q: %w", ch, err)
		}
	}
	p := *pub // the caller may reuse pub; history keeps p
	p.Offset = 0
	p.Time = now.UnixMilli()
	var sp engine.StreamPosition
	if opts.HasHistory() {
		ns := now.UnixNano()
		sp = sh.history.append(ch, &p, opts, ns, after(ns, metaTTL(opts.HistoryMetaTTL, e.opts.HistoryMetaTTL)))
	}
	if key := opts.IdempotencyKey; key != "" {
		sh.idem.remember(ch, key, sp, now.UnixNano(), opts.IdempotentResultTTL)
	}
	h.HandlePublication(ch, &p, sp)
	return sp, nil
}

// PublishJoin delivers a join event. It takes the channel's stripe lock so
// that it is ordered with the channel's publications.
func (e *Engine) PublishJoin(ctx context.Context, ch string, info *engine.ClientInfo) error {
	return e.publishJoinLeave(ctx, false, ch, info)
}

// PublishLeave delivers a leave event, ordered like PublishJoin.
func (e *Engine) PublishLeave(ctx context.Context, ch string, info *engine.ClientInfo) error {
	return e.publishJoinLeave(ctx, true, ch, info)
}

func (e *Engine) publishJoinLeave(ctx context.Context, leave bool, ch string, info *engine.ClientInfo) error {
	sh := e.shard(ch)
	sh.pubMu.Lock()
	defer sh.pubMu.Unlock()
	// The check runs under the lock that Close takes, so that Close waits
	// for a delivery that passed it.
	if _, err := precheck.JoinLeave(ctx, &e.life, ErrNotStarted, leave, ch, info); err != nil {
		return err
	}
	if leave {
		e.handler.HandleLeave(ch, info)
	} else {
		e.handler.HandleJoin(ch, info)
	}
	return nil
}

// PublishControl delivers data to this node's handler, the only node there
// is; a message for another node is dropped, since no other node exists.
func (e *Engine) PublishControl(ctx context.Context, data []byte, node string) error {
	if node != "" && node != e.opts.NodeID {
		if err := e.life.Usable(ctx); err != nil {
			return fmt.Errorf("publish control: %w", err)
		}
		return nil
	}
	e.controlMu.Lock()
	defer e.controlMu.Unlock()
	h, err := e.deliverer(ctx)
	if err != nil {
		return fmt.Errorf("publish control: %w", err)
	}
	h.HandleControl(data)
	return nil
}

// NodeID is this node's id.
func (e *Engine) NodeID() string { return e.opts.NodeID }

// History reads ch's stream. Reading a channel that has no stream makes its
// meta with a new epoch, so the position a subscriber gets before the first
// publication has the epoch that publication will get. Every read keeps the
// meta for req.MetaTTL (or the default) from now.
func (e *Engine) History(ctx context.Context, ch string, req engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition, error) {
	if err := e.life.Usable(ctx); err != nil {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: %w", ch, err)
	}
	if req.Limit < -1 {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: limit %d below -1", ch, req.Limit)
	}
	now := e.now()
	pubs, sp := e.shard(ch).history.read(ch, req, now, after(now, metaTTL(req.MetaTTL, e.opts.HistoryMetaTTL)))
	return pubs, sp, nil
}

// RemoveHistory drops ch's publications; its top offset and epoch stay, so
// later publications continue the same stream.
func (e *Engine) RemoveHistory(ctx context.Context, ch string) error {
	if err := e.life.Usable(ctx); err != nil {
		return fmt.Errorf("remove history %q: %w", ch, err)
	}
	e.shard(ch).history.remove(ch, e.now())
	return nil
}
