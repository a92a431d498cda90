// Package pgcatalog reads from PostgreSQL's system catalog what Herald
// checks of the tables a user gives it (a consumer's outbox, a channel
// state output's table), so that a table it cannot use is named at start.
package pgcatalog

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Querier is what Columns reads through: a pool, a connection or a
// transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Columns maps the columns of table (a name as search_path finds it,
// schema-qualified, or quoted as pgx.Identifier.Sanitize writes it) to
// their types as PostgreSQL names them ("text", "bigint", "bytea"); nil
// when there is no such table.
func Columns(ctx context.Context, q Querier, table string) (map[string]string, error) {
	rows, err := q.Query(ctx, `SELECT a.attname::text, a.atttypid::regtype::text FROM pg_attribute a
		WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`, table)
	if err != nil {
		return nil, err
	}
	cols := map[string]string{}
	var name, typ string
	_, err = pgx.ForEachRow(rows, []any{&name, &typ}, func() error {
		cols[name] = typ
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, nil
	}
	return cols, nil
}
