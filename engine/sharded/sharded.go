// Package sharded spreads channels over several engines of one kind (N
// PostgreSQL databases, N Redis servers) so that a cluster is not capped by
// one database: each channel lives on the shard ShardOf(channel, N) names,
// which keeps its stream, history, presence and idempotency keys and
// carries its publications; the node registry and control messages
// (PublishControl, and so the hub's heartbeats) travel on shard 0; every
// node is started on, and so listens to, every shard.
//
// A shard that is down costs only its own channels: their calls fail (the
// hub answers clients with the protocol's temporary internal error, so
// SDKs retry), and they recover when the shard returns, through the shard
// engine's own reconnection and gap repair; every other channel keeps full
// service. Control messages depend on shard 0.
//
// The shard list is fixed for a cluster's data: ShardOf depends on N, so
// changing the number of shards moves channels to shards that do not hold
// their streams (see docs/engines.md, "Sharding", for the procedure).
package sharded

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/engine"
)

// Engine is an engine.Engine over several shard engines.
type Engine struct {
	shards []engine.Engine
	// started, when set, runs once every shard has started (the
	// PostgreSQL shards' layout record).
	started func(context.Context) error
}

var (
	_ engine.Engine        = (*Engine)(nil)
	_ engine.NodeForgetter = (*Engine)(nil)
)

// New returns an engine over shards, which must be new, not started
// engines of one cluster layout (every node lists the same shards in the
// same order) sharing one NodeID. It takes ownership of them: Close closes
// them all.
func New(shards []engine.Engine) (*Engine, error) {
	if len(shards) == 0 {
		return nil, errors.New("sharded engine: no shards")
	}
	id := shards[0].NodeID()
	for i, s := range shards {
		if s == nil {
			return nil, fmt.Errorf("sharded engine: shard %d is nil", i)
		}
		if s.NodeID() != id {
			return nil, fmt.Errorf("sharded engine: shard %d has node id %q, shard 0 %q: every shard of a node must share one id", i, s.NodeID(), id)
		}
	}
	return &Engine{shards: shards}, nil
}

// Shards returns the number of shards.
func (e *Engine) Shards() int { return len(e.shards) }

// ShardOf returns the index of the shard that owns channel.
func (e *Engine) ShardOf(channel string) int { return ShardOf(channel, len(e.shards)) }

// shard returns the engine that owns channel.
func (e *Engine) shard(channel string) engine.Engine {
	return e.shards[ShardOf(channel, len(e.shards))]
}

// wrap names the shard in an error from it, so that logs say which
// database or server failed.
func wrap(err error, i int) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("shard %d: %w", i, err)
}

// NodeID is the id every shard shares.
func (e *Engine) NodeID() string { return e.shards[0].NodeID() }

// Start starts every shard delivering to h, in order, shard 0 (control
// messages) first. A shard that cannot start fails the whole start: a node
// joins the cluster only once it listens on every shard, so that no
// channel of a reachable shard misses publications. Shards started before
// the failure are closed by Close.
func (e *Engine) Start(ctx context.Context, h engine.Handler) error {
	for i, s := range e.shards {
		if err := s.Start(ctx, h); err != nil {
			return fmt.Errorf("sharded engine: start %w", wrap(err, i))
		}
	}
	if e.started != nil {
		return e.started(ctx)
	}
	return nil
}

// Publish publishes on the channel's shard.
func (e *Engine) Publish(ctx context.Context, ch string, pub *engine.Publication, opts engine.PublishOptions) (engine.StreamPosition, error) {
	i := e.ShardOf(ch)
	sp, err := e.shards[i].Publish(ctx, ch, pub, opts)
	return sp, wrap(err, i)
}

// PublishJoin publishes a join on the channel's shard.
func (e *Engine) PublishJoin(ctx context.Context, ch string, info *engine.ClientInfo) error {
	i := e.ShardOf(ch)
	return wrap(e.shards[i].PublishJoin(ctx, ch, info), i)
}

// PublishLeave publishes a leave on the channel's shard.
func (e *Engine) PublishLeave(ctx context.Context, ch string, info *engine.ClientInfo) error {
	i := e.ShardOf(ch)
	return wrap(e.shards[i].PublishLeave(ctx, ch, info), i)
}

// PublishControl sends control messages on shard 0, which every node
// listens to.
func (e *Engine) PublishControl(ctx context.Context, data []byte, node string) error {
	return wrap(e.shards[0].PublishControl(ctx, data, node), 0)
}

// Subscribe subscribes on the channel's shard.
func (e *Engine) Subscribe(ctx context.Context, ch string) error {
	i := e.ShardOf(ch)
	return wrap(e.shards[i].Subscribe(ctx, ch), i)
}

// SubscribePosition subscribes on the channel's shard and reads its
// position there, in one step when the shard can (engine.PositionSubscriber),
// otherwise as Subscribe and then History.
func (e *Engine) SubscribePosition(ctx context.Context, ch string, metaTTL time.Duration) (engine.StreamPosition, error) {
	i := e.ShardOf(ch)
	if ps, ok := engine.PositionSubscriberOf(e.shards[i]); ok {
		sp, err := ps.SubscribePosition(ctx, ch, metaTTL)
		return sp, wrap(err, i)
	}
	if err := e.shards[i].Subscribe(ctx, ch); err != nil {
		return engine.StreamPosition{}, wrap(err, i)
	}
	_, sp, err := e.shards[i].History(ctx, ch, engine.HistoryRequest{MetaTTL: metaTTL})
	return sp, wrap(err, i)
}

// Unsubscribe unsubscribes on the channel's shard.
func (e *Engine) Unsubscribe(ctx context.Context, ch string) error {
	i := e.ShardOf(ch)
	return wrap(e.shards[i].Unsubscribe(ctx, ch), i)
}

// History reads the channel's stream on its shard.
func (e *Engine) History(ctx context.Context, ch string, req engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition, error) {
	i := e.ShardOf(ch)
	pubs, sp, err := e.shards[i].History(ctx, ch, req)
	return pubs, sp, wrap(err, i)
}

// RemoveHistory drops the channel's stream on its shard.
func (e *Engine) RemoveHistory(ctx context.Context, ch string) error {
	i := e.ShardOf(ch)
	return wrap(e.shards[i].RemoveHistory(ctx, ch), i)
}

// AddPresence adds presence on the channel's shard.
func (e *Engine) AddPresence(ctx context.Context, ch string, info *engine.ClientInfo, ttl time.Duration) error {
	i := e.ShardOf(ch)
	return wrap(e.shards[i].AddPresence(ctx, ch, info, ttl), i)
}

// AddPresenceJoin stores the presence and sends the join on the channel's
// shard, in one step when the shard can (engine.PresenceJoiner),
// otherwise as AddPresence and then PublishJoin.
func (e *Engine) AddPresenceJoin(ctx context.Context, ch string, info *engine.ClientInfo, ttl time.Duration) error {
	i := e.ShardOf(ch)
	if pj, ok := engine.PresenceJoinerOf(e.shards[i]); ok {
		return wrap(pj.AddPresenceJoin(ctx, ch, info, ttl), i)
	}
	if err := e.shards[i].AddPresence(ctx, ch, info, ttl); err != nil {
		return wrap(err, i)
	}
	return wrap(e.shards[i].PublishJoin(ctx, ch, info), i)
}

// RemovePresence removes presence on the channel's shard.
func (e *Engine) RemovePresence(ctx context.Context, ch string, clientID string) error {
	i := e.ShardOf(ch)
	return wrap(e.shards[i].RemovePresence(ctx, ch, clientID), i)
}

// Presence reads the channel's presence on its shard.
func (e *Engine) Presence(ctx context.Context, ch string) (map[string]*engine.ClientInfo, error) {
	i := e.ShardOf(ch)
	p, err := e.shards[i].Presence(ctx, ch)
	return p, wrap(err, i)
}

// PresenceStats counts the channel's presence on its shard.
func (e *Engine) PresenceStats(ctx context.Context, ch string) (engine.PresenceStats, error) {
	i := e.ShardOf(ch)
	st, err := e.shards[i].PresenceStats(ctx, ch)
	return st, wrap(err, i)
}

// ForgetNode forgets node on every shard that keeps records owned by
// nodes: a node's presence entries are spread over the shards of its
// clients' channels. It tries every shard and returns every failure, so a
// shard that is down does not keep the others from forgetting.
func (e *Engine) ForgetNode(ctx context.Context, node string) error {
	var errs []error
	for i, s := range e.shards {
		if f, ok := s.(engine.NodeForgetter); ok {
			errs = append(errs, wrap(f.ForgetNode(ctx, node), i))
		}
	}
	return errors.Join(errs...)
}

// Collectors returns every shard's metrics, each labelled with its shard
// ("shard": "0", "1", ...), so that the same metric of two shards can be
// registered side by side.
func (e *Engine) Collectors() []prometheus.Collector {
	var out []prometheus.Collector
	for i, s := range e.shards {
		c, ok := s.(interface{ Collectors() []prometheus.Collector })
		if !ok {
			continue
		}
		for _, col := range c.Collectors() {
			out = append(out, prometheus.WrapCollectorWith(prometheus.Labels{"shard": strconv.Itoa(i)}, col))
		}
	}
	return out
}

// Close closes every shard and returns every failure. Once closed, calls
// return errors wrapping engine.ErrClosed.
func (e *Engine) Close() error {
	var errs []error
	for i, s := range e.shards {
		errs = append(errs, wrap(s.Close(), i))
	}
	return errors.Join(errs...)
}
