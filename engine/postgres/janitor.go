package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Housekeeping. Every node runs it; a transaction-scoped advisory lock per
// sweep keeps two nodes from doing the same work at once, and every delete
// is bounded so a sweep never holds locks for long on a database the
// application shares.

const (
	// sweepPresenceBatch, sweepSpillBatch and sweepStreamsBatch bound the
	// rows (streams, for the last) one statement handles.
	sweepPresenceBatch = 5000
	sweepSpillBatch    = 500
	sweepStreamsBatch  = 200
	// sweepRounds bounds the statements per sweep and tick, so a backlog
	// is worked off over several ticks rather than in one long burst.
	sweepRounds = 10
	// vacuumMinDead and vacuumDeadRatio: the history table is vacuumed
	// when it has at least this many dead rows and at least one for every
	// vacuumDeadRatio live ones.
	vacuumMinDead   = 10000
	vacuumDeadRatio = 10
)

func (e *Engine) runJanitor() {
	tick := time.NewTicker(e.opts.JanitorInterval)
	defer tick.Stop()
	var lastStreams, lastVacuum time.Time
	var down outage
	vacuum := true
	for {
		select {
		case <-e.bgCtx.Done():
			return
		case <-tick.C:
		}
		err := e.sweep("presence", e.sql.sweepPresence, sweepPresenceBatch)
		if err == nil {
			err = e.sweep("spill", e.sql.sweepSpill, sweepSpillBatch)
		}
		if err == nil {
			err = e.sweep("idempotency keys", e.sql.sweepIdempotency, sweepSpillBatch)
		}
		if err == nil {
			err = e.sweep("expired store entries", e.stSQL.sweep, sweepSpillBatch)
		}
		if err == nil && time.Since(lastStreams) >= e.opts.StreamSweepInterval {
			lastStreams = time.Now()
			err = e.sweep("expired history", e.sql.sweepPubs, sweepStreamsBatch)
			if err == nil {
				err = e.sweep("expired streams", e.sql.sweepMeta, sweepStreamsBatch)
			}
		}
		if err == nil && vacuum && time.Since(lastVacuum) >= e.opts.VacuumInterval {
			lastVacuum = time.Now()
			vacuum, err = e.vacuumHistory()
		}
		switch {
		case err == nil:
			down.recovered(e.log, "janitor sweeps work again")
		case e.bgCtx.Err() == nil:
			down.fail(e.log, "janitor sweep failed", "error", err)
		}
	}
}

// sweep runs stmt (with limit as its parameter when positive) until it
// affects fewer than limit rows, at most sweepRounds times.
func (e *Engine) sweep(what, stmt string, limit int) error {
	return e.sweepUpTo(what, stmt, limit, sweepRounds)
}

// sweepUpTo is sweep with at most rounds statements.
func (e *Engine) sweepUpTo(what, stmt string, limit, rounds int) error {
	key := migrateLockKey(e.opts.Schema + ":sweep:" + what)
	for range rounds {
		n, err := e.sweepOnce(key, stmt, limit)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if limit <= 0 || n < int64(limit) {
			return nil
		}
	}
	return nil
}

// vacuumHistory vacuums the history table when enough of it is dead. At a
// steady state every publication to a history channel leaves one dead row
// behind, and autovacuum looks at a table only once per naptime (a minute
// by default), so without this the table would grow by a minute of
// publications between passes. VACUUM blocks neither reads nor writes,
// and SKIP_LOCKED makes it a no-op while another node or autovacuum is
// already at it. It reports false when the role may not vacuum the table,
// and the janitor stops trying.
func (e *Engine) vacuumHistory() (bool, error) {
	ctx, cancel := context.WithTimeout(e.bgCtx, 5*time.Minute)
	defer cancel()
	var dead, live int64
	var may bool
	err := e.qPool.QueryRow(ctx, e.sql.historyDead).Scan(&dead, &live, &may)
	if err != nil {
		return true, fmt.Errorf("history table statistics: %w", err)
	}
	if !may {
		e.log.Warn("cannot vacuum the history table: the engine's role neither owns it nor has MAINTAIN on it; leaving it to autovacuum")
		return false, nil
	}
	if dead < vacuumMinDead || dead < live/vacuumDeadRatio {
		return true, nil
	}
	_, err = e.qPool.Exec(ctx, e.sql.vacuumHistory, pgx.QueryExecModeSimpleProtocol)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient privilege
		e.log.Warn("cannot vacuum the history table; leaving it to autovacuum", "error", err)
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("vacuum history: %w", err)
	}
	return true, nil
}

func (e *Engine) sweepOnce(key int64, stmt string, limit int) (int64, error) {
	ctx, cancel := context.WithTimeout(e.bgCtx, e.opts.WriteTimeout)
	defer cancel()
	var n int64
	err := pgx.BeginFunc(ctx, e.qPool, func(tx pgx.Tx) error {
		// As for publishing transactions: a connection that goes silent
		// mid-sweep must not keep its rows and the sweep's lock held
		// until the server's TCP keepalive notices.
		if _, err := tx.Exec(ctx, idleLimitStatement(e.opts.WriteTimeout)); err != nil {
			return err
		}
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, key).Scan(&mine); err != nil {
			return err
		}
		if !mine {
			return nil // another node is sweeping
		}
		var args []any
		if limit > 0 {
			args = append(args, limit)
		}
		tag, err := tx.Exec(ctx, stmt, args...)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	return n, nil
}

// runMonitor samples pg_notification_queue_usage(). The queue is shared by
// the whole PostgreSQL cluster and NOTIFY fails once it is full, so the
// warning comes early.
func (e *Engine) runMonitor() {
	tick := time.NewTicker(e.opts.MonitorInterval)
	defer tick.Stop()
	var down outage
	for {
		select {
		case <-e.bgCtx.Done():
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(e.bgCtx, e.opts.MonitorInterval)
		var usage float64
		err := e.qPool.QueryRow(ctx, e.sql.queueUsage).Scan(&usage)
		cancel()
		if err != nil {
			if e.bgCtx.Err() == nil {
				down.fail(e.log, "read notification queue usage", "error", err)
			}
			continue
		}
		down.recovered(e.log, "reading notification queue usage works again")
		e.metrics.queueUsage.Set(usage)
		if usage >= e.opts.QueueWarnUsage {
			e.log.Warn("PostgreSQL notification queue is filling: a listener is not keeping up",
				"usage", usage, "warn_at", e.opts.QueueWarnUsage)
		}
	}
}
