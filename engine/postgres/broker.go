package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/precheck"
)

// errEmptyChannel rejects the empty channel name, which notification
// references use to mean a control message.
var errEmptyChannel = precheck.ErrEmptyChannel

// Publish sends pub to every node through the publishing batcher and
// returns once its transaction committed. With history the publication is
// appended to the channel's stream in the same transaction, so it is
// delivered if and only if it is stored.
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
	it := &item{kind: kindPub, channel: ch, pub: *pub, opts: opts}
	it.pub.Offset = 0
	it.pub.Time = time.Now().UnixMilli()
	sp, err := e.submit(ctx, it)
	if err != nil {
		return engine.StreamPosition{}, fmt.Errorf("publish %q: %w", ch, err)
	}
	return sp, nil
}

// PublishJoin sends a join event to the nodes subscribed to ch.
func (e *Engine) PublishJoin(ctx context.Context, ch string, info *engine.ClientInfo) error {
	return e.publishJoinLeave(ctx, kindJoin, ch, info)
}

// AddPresenceJoin stores info's presence in ch and sends its join in
// one publishing transaction (engine.PresenceJoiner): one round trip
// where AddPresence and PublishJoin take one each. Names PostgreSQL's
// text columns could refuse (not UTF-8, or with NUL) take the two
// steps, so that such a refusal fails this call alone and not the
// batch the join shares with other callers.
func (e *Engine) AddPresenceJoin(ctx context.Context, ch string, info *engine.ClientInfo, ttl time.Duration) error {
	if _, err := precheck.JoinLeave(ctx, &e.life, ErrNotStarted, false, ch, info); err != nil {
		return err
	}
	if ttl <= 0 {
		return fmt.Errorf("add presence and publish join %q: ttl %v is not positive", ch, ttl)
	}
	if !textSafe(ch) || !textSafe(info.Client) || !textSafe(info.User) {
		if err := e.AddPresence(ctx, ch, info, ttl); err != nil {
			return err
		}
		return e.PublishJoin(ctx, ch, info)
	}
	if _, err := e.submit(ctx, &item{kind: kindJoin, channel: ch, info: info, presenceTTL: ttl}); err != nil {
		return fmt.Errorf("add presence and publish join %q: %w", ch, err)
	}
	return nil
}

// PublishLeave sends a leave event to the nodes subscribed to ch.
func (e *Engine) PublishLeave(ctx context.Context, ch string, info *engine.ClientInfo) error {
	return e.publishJoinLeave(ctx, kindLeave, ch, info)
}

func (e *Engine) publishJoinLeave(ctx context.Context, kind byte, ch string, info *engine.ClientInfo) error {
	what, err := precheck.JoinLeave(ctx, &e.life, ErrNotStarted, kind == kindLeave, ch, info)
	if err != nil {
		return err
	}
	if _, err := e.submit(ctx, &item{kind: kind, channel: ch, info: info}); err != nil {
		return fmt.Errorf("publish %s %q: %w", what, ch, err)
	}
	return nil
}

// PublishControl sends data to every node, this one included, or when node
// is set, on that node's own notification channel, which only it listens
// on. It shares a publishing transaction with the publications around it.
func (e *Engine) PublishControl(ctx context.Context, data []byte, node string) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("publish control: %w", err)
	}
	if _, err := e.submit(ctx, &item{kind: kindControl, data: data, node: node}); err != nil {
		return fmt.Errorf("publish control: %w", err)
	}
	return nil
}

// Subscribe makes this node deliver ch's publications and join/leave
// events. It reads the stream's current position first, so the node can
// tell from the first live publication whether it missed any since.
func (e *Engine) Subscribe(ctx context.Context, ch string) error {
	_, err := e.subscribe(ctx, ch, nil)
	return err
}

// SubscribePosition is Subscribe that reads the position with History's
// touch (touchedPosition: one pipelined round trip) instead of the plain
// read, and returns it: the subscriber's reply needs no read of its own
// (engine.PositionSubscriber).
func (e *Engine) SubscribePosition(ctx context.Context, ch string, metaTTL time.Duration) (engine.StreamPosition, error) {
	return e.subscribe(ctx, ch, &metaTTL)
}

// subscribe reads ch's position, touching the stream with *metaTTL when
// it is set, then starts ch's delivery from there.
func (e *Engine) subscribe(ctx context.Context, ch string, metaTTL *time.Duration) (engine.StreamPosition, error) {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return engine.StreamPosition{}, fmt.Errorf("subscribe %q: %w", ch, err)
	}
	sh := e.shardOf(ch)
	resyncs := sh.Resyncs()
	// The listener receives ch's notifications before the subscription
	// is queued: one that arrives between the read below and Subscribe
	// makes Subscribe replay ch from base (sequence.Sequencer.Expect).
	sh.Expect(ch)
	var base engine.StreamPosition
	if metaTTL != nil {
		var err error
		if base, err = e.touchedPosition(ctx, ch, *metaTTL); err != nil {
			sh.Forget(ch)
			return engine.StreamPosition{}, fmt.Errorf("subscribe %q: read stream position: %w", ch, err)
		}
	} else {
		var top int64
		err := e.qPool.QueryRow(ctx, e.sql.streamTop, ch).Scan(&top, &base.Epoch)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			sh.Forget(ch)
			return engine.StreamPosition{}, fmt.Errorf("subscribe %q: read stream position: %w", ch, err)
		default:
			base.Offset = uint64(top)
		}
	}
	sh.Subscribe(ch, base, resyncs)
	return base, nil
}

// touchedPosition is History with Limit 0 (touch, then the stream's
// position) in one pipelined round trip, committed without waiting for
// its WAL to reach disk. touch writes only to create the position or
// keep it longer; a database crash that lost such a write loses the
// position, which the next read creates again with a new epoch: to its
// subscribers, a stream lost and started again, which the epoch exists
// to tell. Waiting for the flush costs milliseconds on a busy disk, in
// the subscriber's reply.
func (e *Engine) touchedPosition(ctx context.Context, ch string, metaTTL time.Duration) (engine.StreamPosition, error) {
	var b pgx.Batch
	b.Queue("BEGIN")
	b.Queue("SET LOCAL synchronous_commit = off")
	b.Queue(e.sql.touch, ch, ceilMS(orDefault(metaTTL, e.opts.HistoryMetaTTL)))
	b.Queue(e.sql.streamTop, ch)
	b.Queue("COMMIT")
	br := e.qPool.SendBatch(ctx, &b)
	defer br.Close()
	for range 3 {
		if _, err := br.Exec(); err != nil {
			return engine.StreamPosition{}, fmt.Errorf("touch stream: %w", err)
		}
	}
	var sp engine.StreamPosition
	var top int64
	if err := br.QueryRow().Scan(&top, &sp.Epoch); err != nil {
		return engine.StreamPosition{}, err
	}
	if _, err := br.Exec(); err != nil {
		return engine.StreamPosition{}, fmt.Errorf("commit: %w", err)
	}
	sp.Offset = uint64(top)
	return sp, nil
}

// Unsubscribe stops delivering ch on this node.
func (e *Engine) Unsubscribe(ctx context.Context, ch string) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("unsubscribe %q: %w", ch, err)
	}
	e.shardOf(ch).Unsubscribe(ch)
	return nil
}
