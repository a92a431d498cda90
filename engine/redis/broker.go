package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/precheck"
	"github.com/heraldhq/herald/engine/internal/wire"
)

// Publish sends pub to the nodes subscribed to ch. With history, one
// script call appends it to the channel's stream and publishes it, so it
// is delivered if and only if it is stored, and in offset order.
func (e *Engine) Publish(ctx context.Context, ch string, pub *engine.Publication, opts engine.PublishOptions) (engine.StreamPosition, error) {
	if pub == nil {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: nil publication", ch)
	}
	if ch == "" {
		return engine.StreamPosition{}, fmt.Errorf("publish: %w", errEmptyChannel)
	}
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: %w", ch, err)
	}
	p := *pub
	p.Time = time.Now().UnixMilli()
	buf := e.bufs.Get()
	defer e.bufs.Put(buf)
	if opts.IdempotencyKey != "" && opts.IdempotentResultTTL <= 0 {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: idempotency key without a positive IdempotentResultTTL", ch)
	}
	if !opts.HasHistory() && opts.IdempotencyKey != "" {
		return engine.StreamPosition{}, e.publishIdempotentNoHistory(ctx, ch, &p, opts, buf)
	}
	if !opts.HasHistory() {
		*buf = wire.AppendPublication(append(*buf, msgPub), &p)
		if err := e.publishRaw(ctx, e.keys.meta(ch), e.keys.pubsubChannel(ch), *buf); err != nil {
			return engine.StreamPosition{}, fmt.Errorf("publish %q: %w", ch, err)
		}
		return engine.StreamPosition{}, nil
	}
	*buf = wire.AppendPublication(*buf, &p)
	rch := e.keys.pubsubChannel(ch)
	if e.opts.MinReplicas > 0 {
		rch = "" // published below, once replicated
	}
	script, keys := publishScript, e.keys.historyKeys(ch)
	args := []any{*buf, opts.HistorySize, millis(opts.HistoryTTL), millis(e.metaTTL(opts.HistoryMetaTTL)), newEpoch(), rch}
	if key := opts.IdempotencyKey; key != "" {
		// The same, guarded by the key in the channel's slot (idempotency.go).
		script, keys = idemPublishHistoryScript, append(keys, e.keys.idempotency(ch, key))
		args = append(args, millis(opts.IdempotentResultTTL))
	}
	var v any
	var err error
	replicas := e.opts.MinReplicas
	if replicas > 0 {
		v, replicas, err = e.publishReplicated(ctx, script, keys, args)
	} else {
		v, err = script.Run(ctx, e.client, keys, args...).Result()
	}
	if err != nil {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: %w", ch, err)
	}
	var sp engine.StreamPosition
	repeat := false
	if v, ok := v.([]any); ok && len(v) >= 2 {
		offset, ok1 := v[0].(int64)
		epoch, ok2 := v[1].(string)
		if ok1 && ok2 && offset > 0 {
			sp = engine.StreamPosition{Offset: uint64(offset), Epoch: epoch}
		}
		if len(v) == 3 {
			isNew, _ := v[2].(int64)
			repeat = isNew == 0
		}
	}
	if sp.Offset == 0 {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: %w: %v", ch, errReply, v)
	}
	if repeat {
		// Published (and relayed) by the first call with this key.
		return sp, nil
	}
	if replicas < e.opts.MinReplicas {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: offset %d confirmed by %d of %d replicas within %v: %w",
			ch, sp.Offset, replicas, e.opts.MinReplicas, e.opts.ReplicaTimeout, ErrNotReplicated)
	}
	if e.opts.MinReplicas > 0 {
		// The message the script would have sent.
		msg := make([]byte, 0, len(*buf)+32)
		msg = strconv.AppendUint(append(msg, msgHistoryPub), sp.Offset, 10)
		msg = append(append(append(append(msg, ':'), sp.Epoch...), ':'), *buf...)
		// Stored and replicated: a subscriber that misses this message
		// (or gets it after a later one) reads it from the stream.
		if err := e.client.Publish(ctx, e.keys.pubsubChannel(ch), msg).Err(); err != nil {
			e.log.Debug("publish replicated publication", "channel", ch, "offset", sp.Offset, "error", err)
		}
	}
	return sp, nil
}

// ErrNotReplicated is returned by Publish when Config.MinReplicas is set
// and fewer replicas confirmed the publication in time. The master stored
// it and subscribers may receive it, but a failover may lose it.
var ErrNotReplicated = errors.New("publication not confirmed by enough replicas")

// publishReplicated runs the publish script, appending only, and WAIT in
// one pipeline: WAIT counts the replicas that have the writes of its own
// connection, so it must follow the script on the same one. It returns
// the script's reply and the number of replicas that confirmed.
//
// Publish sends the message to subscribers only after that: a master
// that sent publications before its replica had them could lose them in
// a failover after subscribers saw them, and the new master would give
// their offsets to other publications, which subscribers would then drop
// as already delivered. The price is a second round trip, and
// publications of concurrent publishers may reach subscribers out of
// order, which their gap repair then puts right from the stream.
func (e *Engine) publishReplicated(ctx context.Context, publishScript *goredis.Script, keys []string, args []any) (any, int, error) {
	for attempt := 0; ; attempt++ {
		var script *goredis.Cmd
		var wait *goredis.Cmd
		_, _ = e.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			script = publishScript.EvalSha(ctx, p, keys, args...)
			wait = p.Do(ctx, "wait", e.opts.MinReplicas, max(e.opts.ReplicaTimeout.Milliseconds(), 1))
			return nil
		})
		v, err := script.Result()
		if err != nil && attempt == 0 && goredis.HasErrorPrefix(err, "NOSCRIPT") {
			if err := publishScript.Load(ctx, e.client).Err(); err != nil {
				return nil, 0, fmt.Errorf("load publish script: %w", err)
			}
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		n, err := wait.Int()
		if err != nil {
			return nil, 0, fmt.Errorf("wait for replicas: %w", err)
		}
		return v, n, nil
	}
}

// PublishJoin sends a join event to the nodes subscribed to ch.
func (e *Engine) PublishJoin(ctx context.Context, ch string, info *engine.ClientInfo) error {
	return e.publishInfo(ctx, msgJoin, ch, info)
}

// PublishLeave sends a leave event to the nodes subscribed to ch.
func (e *Engine) PublishLeave(ctx context.Context, ch string, info *engine.ClientInfo) error {
	return e.publishInfo(ctx, msgLeave, ch, info)
}

// publishInfo sends a join or leave on the channel's own pub/sub channel,
// which keeps it in order with the channel's publications and costs no
// extra subscription.
func (e *Engine) publishInfo(ctx context.Context, kind byte, ch string, info *engine.ClientInfo) error {
	what, err := precheck.JoinLeave(ctx, &e.life, ErrNotStarted, kind == msgLeave, ch, info)
	if err != nil {
		return err
	}
	buf := e.bufs.Get()
	defer e.bufs.Put(buf)
	*buf = wire.AppendClientInfo(append(*buf, kind), info)
	if err := e.publishRaw(ctx, e.keys.meta(ch), e.keys.pubsubChannel(ch), *buf); err != nil {
		return fmt.Errorf("publish %s %q: %w", what, ch, err)
	}
	return nil
}

// PublishControl sends data to every node, this one included, or when node
// is set, on that node's own pub/sub channel, which only it subscribes to.
func (e *Engine) PublishControl(ctx context.Context, data []byte, node string) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("publish control: %w", err)
	}
	rch := e.keys.control
	if node != "" {
		rch = e.keys.nodeControl(node)
	}
	if err := e.publishRaw(ctx, e.keys.control, rch, data); err != nil {
		return fmt.Errorf("publish control: %w", err)
	}
	return nil
}

// publishRaw publishes msg on the pub/sub channel rch. In Redis Cluster a
// PUBLISH may go to any master, which forwards it to the others over the
// cluster bus, so two messages sent one after another through different
// masters can reach a subscriber in the opposite order. There it runs as a
// script keyed on key instead, which executes on the master owning key's
// slot: every message of one channel (key is the channel's meta key, the
// slot its history script runs in) then starts from one master, in order.
func (e *Engine) publishRaw(ctx context.Context, key, rch string, msg []byte) error {
	if !e.cluster {
		return e.client.Publish(ctx, rch, msg).Err()
	}
	return relayScript.Run(ctx, e.client, []string{key}, rch, msg).Err()
}

// Subscribe makes this node deliver ch's publications and join/leave
// events, and returns once Redis confirmed the subscription. It reads the
// stream's position first, so that a publication that arrives after a gap,
// or a reconnect, shows what the node missed since.
func (e *Engine) Subscribe(ctx context.Context, ch string) error {
	if ch == "" {
		return fmt.Errorf("subscribe: %w", errEmptyChannel)
	}
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("subscribe %q: %w", ch, err)
	}
	s := e.subscriberOf(ch)
	resyncs := s.disp.Resyncs()
	base, err := e.position(ctx, ch)
	if err != nil {
		return fmt.Errorf("subscribe %q: read stream position: %w", ch, err)
	}
	// The state goes into the queue before SUBSCRIBE is sent, so it is
	// there before the channel's first message.
	s.disp.Subscribe(ch, base, resyncs)
	if err := s.subscribe(ctx, e.keys.pubsubChannel(ch)); err != nil {
		// Leave nothing behind: the caller sees a failed subscription.
		_ = s.unsubscribe(e.keys.pubsubChannel(ch))
		s.disp.Unsubscribe(ch)
		return fmt.Errorf("subscribe %q: %w", ch, err)
	}
	return nil
}

// Unsubscribe stops delivering ch on this node.
func (e *Engine) Unsubscribe(ctx context.Context, ch string) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("unsubscribe %q: %w", ch, err)
	}
	s := e.subscriberOf(ch)
	s.disp.Unsubscribe(ch)
	if err := s.unsubscribe(e.keys.pubsubChannel(ch)); err != nil {
		return fmt.Errorf("unsubscribe %q: %w", ch, err)
	}
	return nil
}
