package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
)

// The engine's engine.RateLimiter keeps a key's buckets as one row of the
// store table (bucket rateBucket), its value the theoretical arrival time
// of each bucket (GCRA, as the Redis engine's script) in Unix
// microseconds of the database's clock, 8 bytes each, and its expire_at
// when every bucket is full again, after which the janitor removes it. A
// check is one transaction: the upsert that locks the key's row (making
// it for a new key), and the write of the new times when every bucket
// allows. Each check costs the database a transaction: the layer suits
// moderate command rates; the in-memory layers in front filter the rest.

var _ engine.RateLimiter = (*Engine)(nil)

// rateBucket is the store bucket of rate limit rows.
const rateBucket = "rate_limit"

// rateStatements are the SQL of TakeRate.
type rateStatements struct {
	lock, set string
}

func newRateStatements(q func(string) string) rateStatements {
	return rateStatements{
		// DO UPDATE on a conflict takes the row lock and returns the row
		// as it was, so one statement makes or locks the key's row.
		lock: q(`INSERT INTO {{schema}}.store (bucket, key, value, expire_at) VALUES ($1, $2, '', clock_timestamp())
			ON CONFLICT (bucket, key) DO UPDATE SET bucket = EXCLUDED.bucket
			RETURNING value, clock_timestamp()`),
		set: q(`UPDATE {{schema}}.store SET value = $3, expire_at = $4 WHERE bucket = $1 AND key = $2`),
	}
}

// TakeRate implements engine.RateLimiter.
func (e *Engine) TakeRate(ctx context.Context, key string, buckets []engine.RateBucket) (bool, error) {
	if len(buckets) == 0 {
		return true, nil
	}
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return false, err
	}
	q := newRateStatements(e.schemaSQL)
	allowed := false
	err := pgx.BeginFunc(ctx, e.qPool, func(tx pgx.Tx) error {
		var raw []byte
		var now time.Time
		if err := tx.QueryRow(ctx, q.lock, rateBucket, key).Scan(&raw, &now); err != nil {
			return err
		}
		value, full, ok := takeGCRA(raw, buckets, now)
		if !ok {
			return nil // the transaction ends without a write
		}
		allowed = true
		_, err := tx.Exec(ctx, q.set, rateBucket, key, value, full)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("postgres engine: rate limit %s: %w", key, err)
	}
	return allowed, nil
}

// takeGCRA applies one operation at now to the arrival times in raw: the
// new value and when every bucket is full again, or false when a bucket
// refuses.
func takeGCRA(raw []byte, buckets []engine.RateBucket, now time.Time) ([]byte, time.Time, bool) {
	value := make([]byte, 8*len(buckets))
	var full time.Time
	for i, b := range buckets {
		tat := now
		if len(raw) >= 8*(i+1) {
			if t := time.UnixMicro(int64(binary.BigEndian.Uint64(raw[8*i:]))); t.After(now) {
				tat = t
			}
		}
		tat = tat.Add(b.Interval / time.Duration(b.Rate))
		if tat.Sub(now) > b.Interval {
			return nil, time.Time{}, false
		}
		binary.BigEndian.PutUint64(value[8*i:], uint64(tat.UnixMicro()))
		if tat.After(full) {
			full = tat
		}
	}
	return value, full, true
}

// schemaSQL puts the engine's schema in s.
func (e *Engine) schemaSQL(s string) string {
	return strings.ReplaceAll(s, "{{schema}}", e.opts.Schema)
}
