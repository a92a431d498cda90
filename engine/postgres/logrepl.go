package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// The logical replication consumer feeds the tables streamed with
// stream_table(..., mode => 'logical'). Every node that enables it runs
// runLogical; the one that holds a session advisory lock on the slot's
// name consumes the slot, the others retry every CheckInterval and take
// over when the owner's session ends. The owner decodes pgoutput,
// collects each transaction's changes of streamed tables and publishes
// them with logical_apply in one transaction of its own, which records the
// transaction's end position in logical_progress; only then is that
// position confirmed to the slot. So a transaction is published once:
// after a crash the slot sends again what was not confirmed, and
// logical_apply skips what logical_progress already holds.

// errSlotOverLimit stops consuming when the slot holds back too much WAL.
var errSlotOverLimit = errors.New("logical replication slot over its WAL retention limit")

// OIDs of json and jsonb, whose text form is sent as JSON rather than as
// a string so that jsonb_populate_record keeps the value.
const (
	oidJSON  = 114
	oidJSONB = 3802
)

// logicalTx is a decoded transaction's changes of streamed tables, in the
// arrays logical_apply takes.
type logicalTx struct {
	rels []uint32
	ops  []string
	olds []*string
	news []*string
}

func (e *Engine) runLogical() {
	ctx := e.bgCtx
	lc := e.opts.Logical
	backoff := e.opts.ReconnectMin
	// As the other background tasks, the consumer logs the first failure
	// of a streak, not every retry.
	failing := false
	for {
		var streamed bool
		owned, err := e.consumeLogical(ctx, &streamed)
		if ctx.Err() != nil {
			return
		}
		if streamed {
			failing = false // it worked for a while: a new streak
			backoff = e.opts.ReconnectMin
		}
		wait := lc.CheckInterval
		if err != nil {
			e.logical.errors.Inc()
			if !failing {
				e.log.Warn("logical replication consumer stopped; retrying", "slot", lc.Slot, "owner", owned, "err", err)
			}
			failing = true
			wait, backoff = backoff, min(backoff*2, e.opts.ReconnectMax)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// consumeLogical takes the slot's ownership lock if it is free and
// consumes the slot until ctx ends or an error. It reports whether this
// node owned the slot, and sets streamed once replication started.
func (e *Engine) consumeLogical(ctx context.Context, streamed *bool) (bool, error) {
	lc := e.opts.Logical
	cfg, err := pgx.ParseConfig(lc.DSN)
	if err != nil {
		return false, fmt.Errorf("logical DSN: %w", err)
	}
	cfg.RuntimeParams["application_name"] = "herald-logical-lock:" + e.opts.NodeID
	lock, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, fmt.Errorf("connect the slot lock session: %w", err)
	}
	defer closeQuietly(lock)
	var got bool
	if err := lock.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtext($1))`, "herald logical slot "+lc.Slot).Scan(&got); err != nil {
		return false, fmt.Errorf("take the slot lock: %w", err)
	}
	if !got {
		return false, nil
	}
	e.logical.owner.Set(1)
	defer e.logical.owner.Set(0)
	var level string
	if err := lock.QueryRow(ctx, `SHOW wal_level`).Scan(&level); err != nil {
		return true, fmt.Errorf("read wal_level: %w", err)
	}
	if level != "logical" {
		return true, fmt.Errorf("wal_level is %q: logical replication streams need wal_level = logical (a server restart)", level)
	}
	if err := e.prepareSlot(ctx, lock); err != nil {
		return true, err
	}
	rcfg, err := pgconn.ParseConfig(lc.DSN)
	if err != nil {
		return true, fmt.Errorf("logical DSN: %w", err)
	}
	rcfg.RuntimeParams["replication"] = "database"
	rcfg.RuntimeParams["application_name"] = "herald-logical:" + e.opts.NodeID
	rc, err := pgconn.ConnectConfig(ctx, rcfg)
	if err != nil {
		return true, fmt.Errorf("connect for replication: %w", err)
	}
	err = pglogrepl.StartReplication(ctx, rc, lc.Slot, 0, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names '" + e.opts.Schema + "_streams'"},
	})
	if err == nil {
		*streamed = true
		e.log.Info("consuming logical replication slot", "slot", lc.Slot)
		err = e.streamLogical(ctx, lock, rc)
	} else {
		err = fmt.Errorf("start replication from slot %s: %w", lc.Slot, err)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = rc.Close(cctx)
	cancel()
	if errors.Is(err, errSlotOverLimit) && ctx.Err() == nil {
		if derr := e.dropSlot(ctx, lock); derr != nil {
			return true, errors.Join(err, derr)
		}
	}
	return true, err
}

func closeQuietly(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Close(ctx)
}

// prepareSlot makes sure the publication and the slot exist, dropping the
// slot first when it already holds back more WAL than the limit or
// PostgreSQL invalidated it (max_slot_wal_keep_size).
func (e *Engine) prepareSlot(ctx context.Context, lock *pgx.Conn) error {
	lc := e.opts.Logical
	pub := e.opts.Schema + "_streams"
	_, err := lock.Exec(ctx, `DO $do$ BEGIN
		IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = '`+pub+`') THEN
			-- stream_table() creates it too: concurrently, the second
			-- creation fails on the catalog's unique index.
			BEGIN
				CREATE PUBLICATION `+pub+`;
			EXCEPTION WHEN duplicate_object OR unique_violation THEN
				NULL;
			END;
		END IF;
	END $do$`)
	if err != nil {
		return fmt.Errorf("create publication %s: %w", pub, err)
	}
	var retained *int64
	var lost, dropped bool
	err = lock.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - restart_lsn)::bigint, coalesce(wal_status = 'lost', false)
		FROM pg_replication_slots WHERE slot_name = $1`, lc.Slot).Scan(&retained, &lost)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return fmt.Errorf("read slot %s: %w", lc.Slot, err)
	case lost || retained == nil || *retained > lc.MaxRetainedBytes:
		if err := e.dropSlot(ctx, lock); err != nil {
			return err
		}
		dropped = true
	default:
		e.logical.retained.Set(float64(*retained))
		return nil
	}
	// A slot that published before and is gone now (dropped by hand, or
	// left behind on the old primary by a failover) lost the changes
	// since its last confirmed position: say so as loudly as a drop.
	var before bool
	if err := lock.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+e.opts.Schema+`.logical_progress WHERE slot = $1)`, lc.Slot).Scan(&before); err != nil {
		return fmt.Errorf("read logical_progress: %w", err)
	}
	if _, err := lock.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, lc.Slot); err != nil {
		return fmt.Errorf("create logical replication slot %s: %w", lc.Slot, err)
	}
	if before && !dropped {
		e.logical.missing.Inc()
		e.log.Error("logical replication slot was MISSING (dropped outside Herald, or not carried over by a failover) and is created again: "+
			"row changes since its last confirmed position are NOT delivered to logical table streams", "slot", lc.Slot)
	} else {
		e.log.Info("created logical replication slot", "slot", lc.Slot)
	}
	return nil
}

// dropSlot drops the slot, loudly: the changes it held are lost to the
// streams. It waits (bounded) for a replication connection that was just
// closed to release the slot.
func (e *Engine) dropSlot(ctx context.Context, lock *pgx.Conn) error {
	lc := e.opts.Logical
	var retained *int64
	_ = lock.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - restart_lsn)::bigint FROM pg_replication_slots WHERE slot_name = $1`,
		lc.Slot).Scan(&retained)
	var err error
	for range 50 {
		if _, err = lock.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, lc.Slot); err == nil {
			break
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55006" { // object_in_use: the walsender is still exiting
			break
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	if err != nil {
		return fmt.Errorf("drop logical replication slot %s: %w", lc.Slot, err)
	}
	var held any = "unknown (invalidated)"
	if retained != nil {
		held = *retained
	}
	e.log.Error("DROPPED logical replication slot: it held back more WAL than allowed; "+
		"row changes since its last confirmed position are NOT delivered to logical table streams",
		"slot", lc.Slot, "retained_bytes", held, "max_retained_bytes", lc.MaxRetainedBytes)
	// Counted after the log line, so that whoever sees the count (an
	// alert, a test) finds the line that says what was lost.
	e.logical.dropped.Inc()
	return nil
}

// streamLogical reads the replication stream until ctx ends or an error.
func (e *Engine) streamLogical(ctx context.Context, lock *pgx.Conn, rc *pgconn.PgConn) error {
	lc := e.opts.Logical
	relations := make(map[uint32]*pglogrepl.RelationMessage)
	var tx *logicalTx
	var confirmed, sent pglogrepl.LSN
	now := time.Now()
	nextStatus, nextCheck := now.Add(lc.StatusInterval), now
	sendStatus := func() error {
		if err := pglogrepl.SendStandbyStatusUpdate(ctx, rc, pglogrepl.StandbyStatusUpdate{WALWritePosition: confirmed}); err != nil {
			return fmt.Errorf("confirm position %s: %w", confirmed, err)
		}
		sent = confirmed
		nextStatus = time.Now().Add(lc.StatusInterval)
		return nil
	}
	for {
		now := time.Now()
		if !now.Before(nextStatus) {
			if err := sendStatus(); err != nil {
				return err
			}
		}
		if !now.Before(nextCheck) {
			if err := e.checkSlot(ctx, lock); err != nil {
				return err
			}
			nextCheck = now.Add(lc.CheckInterval)
		}
		rctx, cancel := context.WithDeadline(ctx, minTime(nextStatus, nextCheck))
		msg, err := rc.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if pgconn.Timeout(err) && ctx.Err() == nil {
				continue
			}
			return fmt.Errorf("receive from slot %s: %w", lc.Slot, err)
		}
		var data []byte
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("slot %s: %w", lc.Slot, pgconn.ErrorResponseToPgError(m))
		case *pgproto3.CopyData:
			data = m.Data
		default:
			continue
		}
		if len(data) == 0 {
			continue
		}
		switch data[0] {
		case pglogrepl.PrimaryKeepaliveMessageByteID:
			ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
			if err != nil {
				return fmt.Errorf("slot %s keepalive: %w", lc.Slot, err)
			}
			// Between transactions everything sent so far is published,
			// so the server's position may be confirmed: otherwise a
			// database busy with other tables would see the slot hold
			// back its WAL until the limit drops it.
			if tx == nil && ka.ServerWALEnd > confirmed {
				confirmed = ka.ServerWALEnd
			}
			if ka.ReplyRequested {
				if err := sendStatus(); err != nil {
					return err
				}
			}
		case pglogrepl.XLogDataByteID:
			xld, err := pglogrepl.ParseXLogData(data[1:])
			if err != nil {
				return fmt.Errorf("slot %s: %w", lc.Slot, err)
			}
			lm, err := pglogrepl.Parse(xld.WALData)
			if err != nil {
				return fmt.Errorf("slot %s: decode pgoutput: %w", lc.Slot, err)
			}
			switch m := lm.(type) {
			case *pglogrepl.RelationMessage:
				relations[m.RelationID] = m
			case *pglogrepl.BeginMessage:
				tx = &logicalTx{}
			case *pglogrepl.InsertMessage:
				if err := tx.add(relations, m.RelationID, "insert", nil, m.Tuple); err != nil {
					return err
				}
			case *pglogrepl.UpdateMessage:
				if err := tx.add(relations, m.RelationID, "update", m.OldTuple, m.NewTuple); err != nil {
					return err
				}
			case *pglogrepl.DeleteMessage:
				if err := tx.add(relations, m.RelationID, "delete", m.OldTuple, nil); err != nil {
					return err
				}
			case *pglogrepl.CommitMessage:
				if tx == nil {
					return fmt.Errorf("slot %s: commit at %s without begin", lc.Slot, m.TransactionEndLSN)
				}
				if len(tx.rels) > 0 {
					if err := e.applyLogical(ctx, tx, m.TransactionEndLSN); err != nil {
						return err
					}
				}
				tx = nil
				confirmed = m.TransactionEndLSN
				if confirmed > sent && time.Now().After(nextStatus) {
					if err := sendStatus(); err != nil {
						return err
					}
				}
			}
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// checkSlot reads how far the slot is behind, for the metrics, and stops
// consuming when it holds back more WAL than the limit. The query also
// proves the lock session alive: a node that lost it must stop.
func (e *Engine) checkSlot(ctx context.Context, lock *pgx.Conn) error {
	lc := e.opts.Logical
	var retained, lag *int64
	err := lock.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - restart_lsn)::bigint, (pg_current_wal_lsn() - confirmed_flush_lsn)::bigint
		FROM pg_replication_slots WHERE slot_name = $1`, lc.Slot).Scan(&retained, &lag)
	if err != nil {
		return fmt.Errorf("check slot %s: %w", lc.Slot, err)
	}
	if retained == nil {
		return fmt.Errorf("slot %s: %w (invalidated by PostgreSQL)", lc.Slot, errSlotOverLimit)
	}
	e.logical.retained.Set(float64(*retained))
	if lag != nil {
		e.logical.lag.Set(float64(*lag))
	}
	if *retained > lc.MaxRetainedBytes {
		return fmt.Errorf("slot %s holds back %d bytes of WAL, limit %d: %w", lc.Slot, *retained, lc.MaxRetainedBytes, errSlotOverLimit)
	}
	return nil
}

// add appends one row change; old and new are nil when absent.
func (tx *logicalTx) add(relations map[uint32]*pglogrepl.RelationMessage, rel uint32, op string, old, cur *pglogrepl.TupleData) error {
	if tx == nil {
		return fmt.Errorf("%s on relation %d outside a transaction", op, rel)
	}
	r, ok := relations[rel]
	if !ok {
		return fmt.Errorf("%s on relation %d before its description", op, rel)
	}
	oldRow, err := rowJSON(r, old, nil)
	if err != nil {
		return err
	}
	newRow, err := rowJSON(r, cur, old)
	if err != nil {
		return err
	}
	tx.rels = append(tx.rels, rel)
	tx.ops = append(tx.ops, op)
	tx.olds = append(tx.olds, oldRow)
	tx.news = append(tx.news, newRow)
	return nil
}

// rowJSON renders a decoded row as a JSON object of its columns' text
// values. An unchanged TOASTed value ('u', which an update does not
// resend) is taken from the old row, which REPLICA IDENTITY FULL carries.
func rowJSON(r *pglogrepl.RelationMessage, t, old *pglogrepl.TupleData) (*string, error) {
	if t == nil {
		return nil, nil
	}
	if len(t.Columns) != len(r.Columns) {
		return nil, fmt.Errorf("relation %s.%s: row of %d columns, described with %d", r.Namespace, r.RelationName, len(t.Columns), len(r.Columns))
	}
	row := make(map[string]any, len(t.Columns))
	for i, c := range t.Columns {
		if c.DataType == pglogrepl.TupleDataTypeToast && old != nil && i < len(old.Columns) {
			c = old.Columns[i]
		}
		col := r.Columns[i]
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
			row[col.Name] = nil
		case pglogrepl.TupleDataTypeText:
			if (col.DataType == oidJSON || col.DataType == oidJSONB) && json.Valid(c.Data) {
				row[col.Name] = json.RawMessage(c.Data)
			} else {
				row[col.Name] = string(c.Data)
			}
		default:
			// Unchanged TOASTed value without an old row: left out.
		}
	}
	b, err := json.Marshal(row)
	if err != nil {
		return nil, fmt.Errorf("relation %s.%s: %w", r.Namespace, r.RelationName, err)
	}
	s := string(b)
	return &s, nil
}

// applyLogical publishes a decoded transaction unless logical_progress
// shows it was already published.
func (e *Engine) applyLogical(ctx context.Context, tx *logicalTx, end pglogrepl.LSN) error {
	var applied bool
	err := e.pubPool.QueryRow(ctx, `SELECT `+e.opts.Schema+`.logical_apply($1, $2::text::pg_lsn, $3::oid[], $4::text[], $5::jsonb[], $6::jsonb[])`,
		e.opts.Logical.Slot, end.String(), tx.rels, tx.ops, tx.olds, tx.news).Scan(&applied)
	if err != nil {
		return fmt.Errorf("publish the transaction ending at %s (%d changes): %w", end, len(tx.rels), err)
	}
	if applied {
		e.logical.transactions.Inc()
		e.logical.changes.Add(float64(len(tx.rels)))
	} else {
		e.logical.skipped.Inc()
	}
	return nil
}
