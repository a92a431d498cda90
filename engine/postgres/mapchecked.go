package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
)

// Map changes with an idempotency key or an expected position
// (engine.MapPublishOptions.IdempotencyKey, ExpectedPosition) run in a
// transaction of their own: it takes the stream row's lock first, as
// every change of the channel does (map_change_bounded, alloc), so the
// checks below and the change are one step for every node; then
// map_change_bounded makes the change, and the idempotency key's result
// is written before the commit. Changes without them keep their single
// statement, unless they carry Publication.Delta: such a change runs in a
// transaction that first sets {{schema}}.delta, which emit_record reads
// to mark the change's record (migration 0014, codec.go's deltaMark).

// mapCheckedStatements are the checks' SQL.
type mapCheckedStatements struct {
	lock      string
	idemSeen  string
	keyAt     string
	idemSave  string
	markDelta string
}

func newMapCheckedStatements(q func(string) string) mapCheckedStatements {
	return mapCheckedStatements{
		// touch makes the stream row if there is none; idemSeen locks it.
		lock: q(`SELECT {{schema}}.touch($1, $2)`),
		idemSeen: q(`SELECT s.top_offset, s.epoch, d.pub_offset, d.epoch
			  FROM {{schema}}.streams s
			  LEFT JOIN {{schema}}.idempotency d
			    ON d.channel = s.channel AND d.key = $2 AND d.expire_at > now() AND d.pub_offset IS NOT NULL
			 WHERE s.channel = $1 FOR UPDATE OF s`),
		keyAt: q(`SELECT m.pub_offset FROM {{schema}}.map_state m
			 WHERE m.channel = $1 AND m.key = $2 AND (m.expire_at IS NULL OR m.expire_at > now())`),
		idemSave: q(`INSERT INTO {{schema}}.idempotency AS d (channel, key, pub_offset, epoch, expire_at)
			VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond')
			ON CONFLICT (channel, key) DO UPDATE SET pub_offset = excluded.pub_offset,
				epoch = excluded.epoch, expire_at = excluded.expire_at`),
		markDelta: q(`SELECT set_config('{{schema}}.delta', '1', true)`),
	}
}

// mapChangeChecked runs the change (map_change_bounded with args) after
// the idempotency and position checks, in one transaction, with its record
// marked as a delta when delta. For ErrMapDuplicate it returns the first
// change's position, for ErrMapPositionMismatch the stream's current one,
// as for a removal map_change_bounded skipped (HM404).
func (e *Engine) mapChangeChecked(ctx context.Context, ch, key string, opts engine.MapPublishOptions, delta bool, args []any) (engine.StreamPosition, error) {
	var sp engine.StreamPosition
	err := pgx.BeginFunc(ctx, e.qPool, func(tx pgx.Tx) error {
		if delta {
			if _, err := tx.Exec(ctx, e.mapChecked.markDelta); err != nil {
				return fmt.Errorf("mark the change as a delta: %w", err)
			}
		}
		if opts.IdempotencyKey == "" && opts.ExpectedPosition == nil {
			return e.mapChangeIn(ctx, tx, args, &sp)
		}
		if _, err := tx.Exec(ctx, e.mapChecked.lock, ch, ceilMS(orDefault(opts.MetaTTL, e.opts.HistoryMetaTTL))); err != nil {
			return fmt.Errorf("lock the stream: %w", err)
		}
		var top int64
		var epoch string
		var firstOff *int64
		var firstEpoch *string
		if err := tx.QueryRow(ctx, e.mapChecked.idemSeen, ch, opts.IdempotencyKey).Scan(&top, &epoch, &firstOff, &firstEpoch); err != nil {
			return fmt.Errorf("lock the stream: %w", err)
		}
		if opts.IdempotencyKey != "" && firstOff != nil && firstEpoch != nil {
			sp = engine.StreamPosition{Offset: uint64(*firstOff), Epoch: *firstEpoch}
			return engine.ErrMapDuplicate
		}
		if want := opts.ExpectedPosition; want != nil {
			var at int64
			err := tx.QueryRow(ctx, e.mapChecked.keyAt, ch, key).Scan(&at)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("read the key's position: %w", err)
			}
			if err != nil || uint64(at) != want.Offset || epoch != want.Epoch {
				sp = engine.StreamPosition{Offset: uint64(top), Epoch: epoch}
				return engine.ErrMapPositionMismatch
			}
		}
		if err := e.mapChangeIn(ctx, tx, args, &sp); err != nil {
			// map_change_bounded's refusals are mapped by the caller;
			// a skipped removal answers with the stream's position.
			sp = engine.StreamPosition{Offset: uint64(top), Epoch: epoch}
			return err
		}
		if opts.IdempotencyKey != "" {
			if _, err := tx.Exec(ctx, e.mapChecked.idemSave, ch, opts.IdempotencyKey, int64(sp.Offset), sp.Epoch, ceilMS(opts.IdempotentResultTTL)); err != nil {
				return fmt.Errorf("remember the idempotency key: %w", err)
			}
		}
		return nil
	})
	return sp, err
}

// mapChangeIn runs map_change_bounded with args in tx, setting sp.
func (e *Engine) mapChangeIn(ctx context.Context, tx pgx.Tx, args []any, sp *engine.StreamPosition) error {
	var off int64
	if err := tx.QueryRow(ctx, e.mapSQL.change, args...).Scan(&off, &sp.Epoch); err != nil {
		return err // map_change_bounded's refusals are mapped by the caller
	}
	sp.Offset = uint64(off)
	return nil
}
