package stateoutput

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/internal/pgcatalog"
)

// PostgresConfig is the postgresql section: a table that gets one row per
// event, stored once however often its batch is written.
type PostgresConfig struct {
	DSN   string `yaml:"dsn" doc:"the database holding the table, any database, e.g. 'postgres://user:pass@host:5432/app'"`
	Table string `yaml:"table" default:"herald_channel_state_events" doc:"the table, optionally schema-qualified; created at start if missing, with the columns 'id' (bigserial), 'channel', 'type' (text), 'time_ms' (bigint), 'created_at' (timestamptz) and UNIQUE ('channel', 'time_ms', 'type'). An existing table must have those columns and that constraint"`
}

// DefaultPostgresTable is PostgresConfig.Table's default.
const DefaultPostgresTable = "herald_channel_state_events"

// tableName is a table name, optionally schema-qualified, that needs no
// quoting in the messages that name it.
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// Validate reports every problem of c, each an *optionerr.Error.
func (c PostgresConfig) Validate() error {
	var errs optionerr.List
	if c.DSN == "" {
		errs.Add("DSN", "required, e.g. postgres://user:pass@host:5432/app")
	} else if _, err := pgxpool.ParseConfig(c.DSN); err != nil {
		errs.Add("DSN", "%v", err)
	}
	if c.Table != "" && !tableName.MatchString(c.Table) {
		errs.Add("Table", "%q: want a table name, optionally schema-qualified (letters, digits, _)", c.Table)
	}
	return errs.Err()
}

// table is c.Table or its default.
func (c PostgresConfig) table() string {
	if c.Table == "" {
		return DefaultPostgresTable
	}
	return c.Table
}

// PostgresOutput inserts each event as a row of a table. A row is named by
// (channel, time_ms, type), under a UNIQUE constraint, and inserted with
// ON CONFLICT DO NOTHING: a batch written again (the node killed after
// the commit, before the engine recorded the batch delivered) adds
// nothing, so each transition is stored exactly once. A batch is one
// transaction, its rows inserted in order, so ids follow the order of
// each channel's changes.
type PostgresOutput struct {
	pool   *pgxpool.Pool
	table  string // as written in the configuration, for messages
	ident  string // quoted
	insert string
}

// postgresTableBody is the table's definition, which docs/proxy.md shows
// (TestPostgresTableDocumented).
const postgresTableBody = `(
  id bigserial PRIMARY KEY,
  channel text NOT NULL,
  type text NOT NULL,
  time_ms bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (channel, time_ms, type)
)`

// postgresColumns are the columns the output writes or relies on, with
// their types as pgcatalog.Columns names them.
var postgresColumns = []struct{ name, typ string }{
	{"channel", "text"}, {"type", "text"}, {"time_ms", "bigint"},
}

func newPostgres(c PostgresConfig) (*PostgresOutput, error) {
	pcfg, err := pgxpool.ParseConfig(c.DSN)
	if err != nil {
		return nil, fmt.Errorf("postgresql.dsn: %w", err)
	}
	// One batch at a time per node: two connections leave one for the
	// start's checks and a retry racing a slow commit.
	pcfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		return nil, fmt.Errorf("postgresql: %w", err)
	}
	ident := pgx.Identifier(strings.Split(c.table(), ".")).Sanitize()
	return &PostgresOutput{
		pool: pool, table: c.table(), ident: ident,
		insert: "INSERT INTO " + ident + " (channel, type, time_ms) VALUES ($1, $2, $3) ON CONFLICT (channel, time_ms, type) DO NOTHING",
	}, nil
}

// NewPostgresOutput connects to c.DSN and creates the table if missing,
// or checks its columns and constraint.
func NewPostgresOutput(ctx context.Context, c PostgresConfig) (*PostgresOutput, error) {
	return openAs[*PostgresOutput](ctx, Config{Name: TypePostgres, Type: TypePostgres, Postgres: c})
}

// prepare creates the table if missing; else checks that it has the
// columns the output writes and the constraint that makes a repeat a
// no-op, naming what is missing.
func (o *PostgresOutput) prepare(ctx context.Context) error {
	_, err := o.pool.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+o.ident+" "+postgresTableBody)
	if err != nil {
		return fmt.Errorf("postgresql: create table %s: %w", o.table, err)
	}
	have, err := pgcatalog.Columns(ctx, o.pool, o.ident)
	if err != nil {
		return fmt.Errorf("postgresql: read the columns of table %s: %w", o.table, err)
	}
	var errs []error
	for _, col := range postgresColumns {
		switch got, ok := have[col.name]; {
		case !ok:
			errs = append(errs, fmt.Errorf("postgresql: table %s has no column %q (%s)", o.table, col.name, col.typ))
		case got != col.typ:
			errs = append(errs, fmt.Errorf("postgresql: table %s: column %q is %s, want %s", o.table, col.name, got, col.typ))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	// ON CONFLICT (channel, time_ms, type) needs a unique index on exactly
	// these columns, in any order.
	var unique bool
	err = o.pool.QueryRow(ctx, `SELECT EXISTS (
	SELECT 1 FROM pg_index i
	WHERE i.indrelid = $1::regclass AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
	  AND (SELECT array_agg(a.attname::text ORDER BY a.attname) FROM pg_attribute a
	       WHERE a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)) = ARRAY['channel', 'time_ms', 'type'])`, o.ident).Scan(&unique)
	if err != nil {
		return fmt.Errorf("postgresql: read the indexes of table %s: %w", o.table, err)
	}
	if !unique {
		return fmt.Errorf("postgresql: table %s has no UNIQUE (channel, time_ms, type): add it, it makes a batch written twice stored once", o.table)
	}
	return nil
}

// Write implements Output: the batch in one transaction, in order.
func (o *PostgresOutput) Write(ctx context.Context, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	err := pgx.BeginFunc(ctx, o.pool, func(tx pgx.Tx) error {
		var b pgx.Batch
		for _, e := range evs {
			b.Queue(o.insert, e.Channel, e.Type, e.TimeMs)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
	if err != nil {
		return fmt.Errorf("postgresql: insert into %s: %w", o.table, err)
	}
	return nil
}

// Close implements Output.
func (o *PostgresOutput) Close() { o.pool.Close() }
