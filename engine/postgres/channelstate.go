package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
)

var _ engine.ChannelStates = (*Engine)(nil)

// Channel state events (schema version 20, 0020_channel_state.sql): the
// decisions are made by the SQL functions there, under each channel's
// row lock; this file calls them and delivers the outbox.

const (
	// channelStateSweepBatch bounds the nodes and channels one sweep
	// handles.
	channelStateSweepBatch = 1000
	// channelStateFullSweep is how often a node also looks for what a
	// race may leave behind (a scan of the occupied channels).
	channelStateFullSweep = 10 * time.Second
)

// channelStateStatements are the SQL of the engine's ChannelStates.
type channelStateStatements struct {
	set, keep, renew, release, sweep, read, ack string
	sweepKey, deliverKey                        int64
	// lastFull is when this engine last made a full sweep (Unix ns).
	lastFull *atomic.Int64
}

func newChannelStateStatements(schema string) channelStateStatements {
	q := func(s string) string { return strings.ReplaceAll(s, "{{schema}}", schema) }
	return channelStateStatements{
		set: q(`SELECT {{schema}}.channel_state_set($1, $2, $3, $4, $5)`),
		keep: q(`UPDATE {{schema}}.channel_state_nodes SET expire_at = clock_timestamp() + $2 * interval '1 millisecond'
			WHERE node_id = $1 AND expire_at > clock_timestamp()`),
		renew: q(`INSERT INTO {{schema}}.channel_state_nodes (node_id, expire_at) VALUES ($1, clock_timestamp() + $2 * interval '1 millisecond')
			ON CONFLICT (node_id) DO UPDATE SET expire_at = EXCLUDED.expire_at`),
		release:    q(`SELECT {{schema}}.channel_state_release($1)`),
		sweep:      q(`SELECT {{schema}}.channel_state_sweep($1, $2)`),
		read:       q(`SELECT id, channel, type, time_ms FROM {{schema}}.channel_state_events ORDER BY id LIMIT $1`),
		ack:        q(`DELETE FROM {{schema}}.channel_state_events WHERE id = ANY($1::int8[])`),
		sweepKey:   migrateLockKey(schema + ":channel_state:sweep"),
		deliverKey: migrateLockKey(schema + ":channel_state:deliver"),
		lastFull:   new(atomic.Int64),
	}
}

// SetChannelOccupancy implements engine.ChannelStates.
func (e *Engine) SetChannelOccupancy(ctx context.Context, channel string, occupied bool, opts engine.ChannelStateOptions) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return err
	}
	_, err := e.qPool.Exec(ctx, e.csSQL.set, channel, e.opts.NodeID, occupied, opts.VacatedDelay.Milliseconds(), opts.NodeTTL.Milliseconds())
	if err != nil {
		return fmt.Errorf("postgres engine: record occupancy of %q (occupied %v): %w", channel, occupied, err)
	}
	return nil
}

// KeepChannelOccupancy implements engine.ChannelStates.
func (e *Engine) KeepChannelOccupancy(ctx context.Context, ttl time.Duration) (bool, error) {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return false, err
	}
	tag, err := e.qPool.Exec(ctx, e.csSQL.keep, e.opts.NodeID, ttl.Milliseconds())
	if err != nil {
		return false, fmt.Errorf("postgres engine: renew channel state lease: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return false, nil
	}
	// Lapsed (and maybe released by a sweep already) or never made.
	if _, err := e.qPool.Exec(ctx, e.csSQL.renew, e.opts.NodeID, ttl.Milliseconds()); err != nil {
		return true, fmt.Errorf("postgres engine: make channel state lease: %w", err)
	}
	return true, nil
}

// ReleaseChannelOccupancy implements engine.ChannelStates.
func (e *Engine) ReleaseChannelOccupancy(ctx context.Context) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return err
	}
	if _, err := e.qPool.Exec(ctx, e.csSQL.release, e.opts.NodeID); err != nil {
		return fmt.Errorf("postgres engine: release this node's channels: %w", err)
	}
	return nil
}

// DeliverChannelStates implements engine.ChannelStates. The sweep and
// the delivery are two transactions, each under an advisory lock of its
// own: the sweep's row locks are held for milliseconds, while the
// delivery holds only its lock through fn, so a slow backend never holds
// up a subscribe.
func (e *Engine) DeliverChannelStates(ctx context.Context, limit int, fn func(context.Context, []engine.ChannelStateEvent) error) (int, error) {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return 0, err
	}
	if err := e.sweepChannelStates(ctx); err != nil {
		return 0, fmt.Errorf("postgres engine: channel state sweep: %w", err)
	}
	var n int
	err := pgx.BeginFunc(ctx, e.qPool, func(tx pgx.Tx) error {
		if dl, ok := ctx.Deadline(); ok {
			// A deliverer that dies mid-call must not keep the lock.
			if _, err := tx.Exec(ctx, idleLimitStatement(time.Until(dl)+time.Second)); err != nil {
				return err
			}
		}
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, e.csSQL.deliverKey).Scan(&mine); err != nil {
			return err
		}
		if !mine {
			return nil // another node is delivering
		}
		rows, err := tx.Query(ctx, e.csSQL.read, limit)
		if err != nil {
			return err
		}
		var ids []int64
		var evs []engine.ChannelStateEvent
		var id int64
		var ev engine.ChannelStateEvent
		if _, err := pgx.ForEachRow(rows, []any{&id, &ev.Channel, &ev.Type, &ev.TimeMs}, func() error {
			ids = append(ids, id)
			evs = append(evs, ev)
			return nil
		}); err != nil {
			return err
		}
		if len(evs) == 0 {
			return nil
		}
		if err := fn(ctx, evs); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, e.csSQL.ack, ids); err != nil {
			return err
		}
		n = len(evs)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("postgres engine: deliver channel state events: %w", err)
	}
	return n, nil
}

// sweepChannelStates makes the due changes, one node at a time.
func (e *Engine) sweepChannelStates(ctx context.Context) error {
	last := e.csSQL.lastFull.Load()
	full := time.Since(time.Unix(0, last)) >= channelStateFullSweep
	err := pgx.BeginFunc(ctx, e.qPool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, idleLimitStatement(e.opts.WriteTimeout)); err != nil {
			return err
		}
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, e.csSQL.sweepKey).Scan(&mine); err != nil {
			return err
		}
		if !mine {
			full = false
			return nil // another node is sweeping
		}
		_, err := tx.Exec(ctx, e.csSQL.sweep, channelStateSweepBatch, full)
		return err
	})
	if err == nil && full {
		e.csSQL.lastFull.CompareAndSwap(last, time.Now().UnixNano())
	}
	return err
}
