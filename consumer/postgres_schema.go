package consumer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldhq/herald/internal/pgcatalog"
)

// outboxColumn is a column of the outbox table the consumer reads, with
// the types it reads it as (PostgreSQL's names, as regtype prints them).
// docs/consumers.md lists them; a test checks that it lists these.
type outboxColumn struct {
	name  string
	types []string
}

// outboxColumns are the outbox table's columns the consumer needs, checked
// when it starts: Centrifugo's shape, and the types that hold the same
// values. A payload in bytea is read as its bytes.
var outboxColumns = []outboxColumn{
	{"id", []string{"bigint", "integer"}},
	{"method", []string{"text", "character varying"}},
	{"payload", []string{"jsonb", "json", "text", "character varying", "bytea"}},
	{"partition", []string{"integer", "smallint", "bigint"}},
}

// outboxColumnsMarkdown is the table of outboxColumns in docs/consumers.md.
func outboxColumnsMarkdown() string {
	var b strings.Builder
	b.WriteString("| column | types |\n|---|---|\n")
	for _, c := range outboxColumns {
		fmt.Fprintf(&b, "| `%s` | `%s` |\n", c.name, strings.Join(c.types, "`, `"))
	}
	return b.String()
}

// checkOutbox checks that the outbox table exists with the columns the
// consumer reads, in types it can read them as, so that a table it cannot
// read is named at the start rather than as a scan error of each batch.
func (s *PostgresSource) checkOutbox(ctx context.Context, pool *pgxpool.Pool) error {
	table := s.cfg.OutboxTableName
	cols, err := pgcatalog.Columns(ctx, pool, table)
	if err != nil {
		return fmt.Errorf("postgresql: columns of %s: %w", table, err)
	}
	if cols == nil {
		return fmt.Errorf("postgresql: outbox table %s not found (create it as docs/consumers.md shows)", table)
	}
	var wrong []string
	for _, c := range outboxColumns {
		typ, ok := cols[c.name]
		switch {
		case !ok:
			wrong = append(wrong, fmt.Sprintf("%s missing (want %s)", c.name, strings.Join(c.types, ", ")))
		case !slices.Contains(c.types, typ):
			wrong = append(wrong, fmt.Sprintf("%s is %s (want %s)", c.name, typ, strings.Join(c.types, ", ")))
		}
	}
	if wrong != nil {
		return fmt.Errorf("postgresql: outbox table %s: %s", table, strings.Join(wrong, "; "))
	}
	return nil
}

// prepareDeadLetter creates the dead-letter table if missing. Its payload
// is bytea, the row's bytes as they were: it holds whatever the outbox's
// payload column can (non-UTF-8 bytes and NUL from a bytea column, which
// text refused, jamming the partition). A table made by an earlier
// version, with a text payload, is converted.
func (s *PostgresSource) prepareDeadLetter(ctx context.Context, pool *pgxpool.Pool) error {
	table := s.cfg.DeadLetterTableName
	ddl := `CREATE TABLE IF NOT EXISTS ` + table + ` (
		id bigint NOT NULL, method text NOT NULL, payload bytea NOT NULL, partition integer NOT NULL,
		error text NOT NULL, failed_at timestamptz NOT NULL DEFAULT now())`
	if _, err := pool.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("postgresql: create %s: %w", table, err)
	}
	cols, err := pgcatalog.Columns(ctx, pool, table)
	if err != nil {
		return fmt.Errorf("postgresql: columns of %s: %w", table, err)
	}
	switch typ := cols["payload"]; typ {
	case "bytea":
		return nil
	case "text", "character varying", "json", "jsonb":
		if _, err := pool.Exec(ctx, `ALTER TABLE `+table+` ALTER COLUMN payload TYPE bytea USING convert_to(payload::text, 'UTF8')`); err != nil {
			return fmt.Errorf("postgresql: %s.payload is %s and cannot hold every outbox row: converting it to bytea: %w", table, typ, err)
		}
		return nil
	default:
		return fmt.Errorf("postgresql: dead-letter table %s: payload is %q, want bytea", table, typ)
	}
}
