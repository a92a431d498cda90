package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/heraldhq/herald/engine"
)

var _ engine.MapBroker = (*Engine)(nil)

// sweepMapKeysBatch bounds the expired map keys one sweep statement (one
// transaction) removes. expire_map_keys removes a channel's due keys
// together (schema version 12), so a statement of thousands is short; at
// 200 a statement the round trips and commits alone kept 30,000 keys
// expiring together seconds late.
const sweepMapKeysBatch = 5000

// mapStatements are the map channels' SQL (schema version 4).
type mapStatements struct {
	change     string
	statePos   string
	statePage  string
	stateKey   string
	stats      string
	clearLock  string
	clearState string
	clearPubs  string
	clearTop   string
	sweepKeys  string
	nextExpiry string
}

func newMapStatements(q func(string) string) mapStatements {
	return mapStatements{
		change: q(`SELECT change_offset, change_epoch FROM {{schema}}.map_change_bounded(
			$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17::jsonb, $18, $19, $20)`),
		statePos: q(`SELECT top_offset, epoch FROM {{schema}}.streams WHERE channel = $1`),
		statePage: q(`SELECT key, pub_offset, time_ms, data, client_id, user_id, conn_info, chan_info, tags::text
			  FROM {{schema}}.map_state
			 WHERE channel = $1 AND key > $2 AND (expire_at IS NULL OR expire_at > now())
			 ORDER BY key LIMIT $3`),
		stateKey: q(`SELECT key, pub_offset, time_ms, data, client_id, user_id, conn_info, chan_info, tags::text
			  FROM {{schema}}.map_state
			 WHERE channel = $1 AND key = $2 AND (expire_at IS NULL OR expire_at > now())`),
		stats: q(`SELECT count(*) FROM {{schema}}.map_state
			 WHERE channel = $1 AND (expire_at IS NULL OR expire_at > now())`),
		clearLock:  q(`SELECT 1 FROM {{schema}}.streams WHERE channel = $1 FOR UPDATE`),
		clearState: q(`DELETE FROM {{schema}}.map_state WHERE channel = $1`),
		clearPubs:  q(`DELETE FROM {{schema}}.history WHERE channel = $1`),
		clearTop:   q(`DELETE FROM {{schema}}.streams WHERE channel = $1`),
		// One row per removed key, so the janitor's sweep sees how many.
		sweepKeys: q(`SELECT 1 FROM generate_series(1, {{schema}}.expire_map_keys($1))`),
		// Seconds until the earliest key expiry (negative when due, NULL
		// when no key has a TTL), on the database's clock as the sweep's.
		nextExpiry: q(`SELECT extract(epoch FROM min(expire_at) - now())::float8
			  FROM {{schema}}.map_state WHERE expire_at IS NOT NULL`),
	}
}

// sqlStateMapKeyLimit is map_change_bounded's refusal of a new key
// (migrations/0009_map_bounds_tags.sql).
// sqlStateMapKeyExists and sqlStateMapKeyNotFound are its refusals for
// MapPublishOptions.KeyMode.
const (
	sqlStateMapKeyLimit    = "HM429"
	sqlStateMapKeyExists   = "HM409"
	sqlStateMapKeyNotFound = "HM404"
	sqlStateMapVersion     = "HM412"
)

// MapPublish records a change of a map channel in one statement
// (map_change): the stream position, the history row, the state row and
// the notification commit together.
func (e *Engine) MapPublish(ctx context.Context, ch string, pub *engine.Publication, opts engine.MapPublishOptions) (engine.StreamPosition, error) {
	switch {
	case pub == nil:
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: nil publication", ch)
	case pub.Key == "":
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: empty key", ch)
	case !opts.Valid():
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: StreamSize and StreamTTL must both be positive, and IdempotentResultTTL with an IdempotencyKey", ch)
	}
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: %w", ch, err)
	}
	var data []byte
	var field *string
	if !pub.Removed {
		data = pub.Data
		if data == nil {
			data = []byte{}
		}
		f := string(appendField(nil, data, false))
		field = &f
	}
	var user, client *string
	var connInfo, chanInfo []byte
	if info := pub.Info; info != nil {
		user, client = &info.User, &info.Client
		connInfo, chanInfo = info.ConnInfo, info.ChanInfo
	}
	args := []any{ch, pub.Key, data, field, pub.Removed,
		int32(opts.StreamSize), ceilMS(opts.StreamTTL), ceilMS(orDefault(opts.MetaTTL, e.opts.HistoryMetaTTL)),
		ceilMS(opts.KeyTTL), user, client, connInfo, chanInfo, opts.SkipMissingRemove, opts.TouchIfExists,
		int32(min(opts.MaxKeys, math.MaxInt32)), tagsJSON(pub.Tags), string(opts.KeyMode),
		int64(min(opts.Version, math.MaxInt64)), opts.VersionEpoch,
	}
	var off int64
	var sp engine.StreamPosition
	var err error
	// top is the stream's position a removal skipped for a missing key
	// answers with (engine.MapPublishOptions.SkipMissingRemove).
	var top engine.StreamPosition
	switch {
	case opts.IdempotencyKey != "" || opts.ExpectedPosition != nil,
		pub.Delta && !(pub.Removed && opts.SkipMissingRemove):
		// A removal carries no data for a delta to mark: one skipped for
		// a missing key goes the way that reads the stream's position.
		sp, err = e.mapChangeChecked(ctx, ch, pub.Key, opts, pub.Delta, args)
		if errors.Is(err, engine.ErrMapDuplicate) || errors.Is(err, engine.ErrMapPositionMismatch) {
			return sp, fmt.Errorf("map publish %q: %w", ch, err)
		}
		top = sp
		off = int64(sp.Offset)
	case pub.Removed && opts.SkipMissingRemove:
		top, off, sp.Epoch, err = e.mapRemoveReadingTop(ctx, ch, args)
	default:
		err = e.qPool.QueryRow(ctx, e.mapSQL.change, args...).Scan(&off, &sp.Epoch)
	}
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) {
		switch pgErr.Code {
		case sqlStateMapKeyLimit:
			err = engine.ErrMapKeyLimit
		case sqlStateMapKeyExists:
			err = engine.ErrMapKeyExists
		case sqlStateMapKeyNotFound:
			err = engine.ErrMapKeyNotFound
			if pub.Removed {
				return top, fmt.Errorf("map publish %q: %w", ch, err)
			}
		case sqlStateMapVersion:
			err = engine.ErrMapVersion
		}
	}
	if err != nil {
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: %w", ch, err)
	}
	sp.Offset = uint64(off)
	return sp, nil
}

// mapRemoveReadingTop runs a removal with SkipMissingRemove (args as
// MapPublish makes them) after a read of the stream's position, both in
// one pipelined round trip: when map_change_bounded refuses the removal
// (HM404, its transaction rolled back), the position read just before is
// the answer, as Centrifugo gives the stream's offset and epoch with
// key_not_found (centrifuge v0.40.1 map_broker_add.lua). A channel without
// a stream has the zero position there.
func (e *Engine) mapRemoveReadingTop(ctx context.Context, ch string, args []any) (top engine.StreamPosition, off int64, epoch string, err error) {
	var b pgx.Batch
	b.Queue(e.sql.streamTop, ch)
	b.Queue(e.mapSQL.change, args...)
	br := e.qPool.SendBatch(ctx, &b)
	defer br.Close()
	var topOffset int64
	switch err := br.QueryRow().Scan(&topOffset, &top.Epoch); {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return engine.StreamPosition{}, 0, "", fmt.Errorf("read stream position: %w", err)
	default:
		top.Offset = uint64(topOffset)
	}
	err = br.QueryRow().Scan(&off, &epoch)
	return top, off, epoch, err
}

// MapState reads a page of ch's state and the stream's position in one
// snapshot, which map_change's locking makes agree.
func (e *Engine) MapState(ctx context.Context, ch string, req engine.MapStateRequest) (engine.MapStatePage, error) {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return engine.MapStatePage{}, fmt.Errorf("map state %q: %w", ch, err)
	}
	if req.Limit <= 0 {
		return engine.MapStatePage{}, fmt.Errorf("map state %q: limit %d, want a positive one", ch, req.Limit)
	}
	if _, err := e.qPool.Exec(ctx, e.sql.touch, ch, ceilMS(orDefault(req.MetaTTL, e.opts.HistoryMetaTTL))); err != nil {
		return engine.MapStatePage{}, fmt.Errorf("map state %q: touch stream: %w", ch, err)
	}
	var page engine.MapStatePage
	err := pgx.BeginTxFunc(ctx, e.qPool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var top int64
		if err := tx.QueryRow(ctx, e.mapSQL.statePos, ch).Scan(&top, &page.Position.Epoch); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return errors.New("stream vanished while it was read")
			}
			return err
		}
		page.Position.Offset = uint64(top)
		stmt, args := e.mapSQL.statePage, []any{ch, req.Cursor, req.Limit + 1}
		if req.Key != "" {
			stmt, args = e.mapSQL.stateKey, []any{ch, req.Key}
		}
		rows, err := tx.Query(ctx, stmt, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r historyRow
			var key string
			if err := rows.Scan(&key, &r.offset, &r.timeMS, &r.data, &r.clientID, &r.userID, &r.connInfo, &r.chanInfo, &r.tags); err != nil {
				return err
			}
			p, err := r.publication()
			if err != nil {
				return err
			}
			p.Key = key
			page.Entries = append(page.Entries, p)
		}
		return rows.Err()
	})
	if err != nil {
		return engine.MapStatePage{}, fmt.Errorf("map state %q: %w", ch, err)
	}
	if len(page.Entries) > req.Limit {
		page.Entries = page.Entries[:req.Limit]
		page.Cursor = page.Entries[req.Limit-1].Key
	}
	return page, nil
}

// MapStats counts ch's keys that have not expired.
func (e *Engine) MapStats(ctx context.Context, ch string) (engine.MapStats, error) {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return engine.MapStats{}, fmt.Errorf("map stats %q: %w", ch, err)
	}
	var n int64
	if err := e.qPool.QueryRow(ctx, e.mapSQL.stats, ch).Scan(&n); err != nil {
		return engine.MapStats{}, fmt.Errorf("map stats %q: %w", ch, err)
	}
	return engine.MapStats{NumKeys: int(n)}, nil
}

// MapClear drops ch's state, stream and position; the next read or change
// starts a new epoch.
func (e *Engine) MapClear(ctx context.Context, ch string) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("map clear %q: %w", ch, err)
	}
	err := pgx.BeginFunc(ctx, e.qPool, func(tx pgx.Tx) error {
		for _, stmt := range []string{e.mapSQL.clearLock, e.mapSQL.clearState, e.mapSQL.clearPubs, e.mapSQL.clearTop} {
			if _, err := tx.Exec(ctx, stmt, ch); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("map clear %q: %w", ch, err)
	}
	return nil
}
