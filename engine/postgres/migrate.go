package postgres

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one versioned SQL file, named NNNN_description.sql.
type migration struct {
	version int
	name    string
	sql     string // with {{schema}} still in place
}

// migrations returns the embedded migrations in version order.
func migrations() ([]migration, error) {
	files, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	out := make([]migration, 0, len(files))
	for _, f := range files {
		base := path.Base(f)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive version and '_'", base)
		}
		body, err := migrationFS.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", base, err)
		}
		out = append(out, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", out[i-1].name, out[i].name, out[i].version)
		}
	}
	return out, nil
}

func (m migration) body(schema string) string {
	return strings.ReplaceAll(m.sql, "{{schema}}", schema)
}

func bootstrapSQL(schema string) string {
	return `CREATE SCHEMA IF NOT EXISTS ` + schema + `;
CREATE TABLE IF NOT EXISTS ` + schema + `.schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);`
}

func recordSQL(schema string, m migration) string {
	return `INSERT INTO ` + schema + `.schema_migrations (version, name) VALUES (` +
		strconv.Itoa(m.version) + `, '` + m.name + `') ON CONFLICT (version) DO NOTHING;`
}

// SQL returns the whole schema as plain SQL for teams that apply
// migrations themselves: it creates the schema, applies every migration
// in its own transaction and records it, so that a later Migrate (or an
// engine started without SkipMigrate) finds nothing to do. Run it once;
// unlike Migrate it is not safe to run twice, and it takes no lock.
func SQL(schema string) (string, error) {
	if err := checkSchema(schema); err != nil {
		return "", err
	}
	ms, err := migrations()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("-- Herald PostgreSQL engine schema " + schema + "\n")
	b.WriteString(bootstrapSQL(schema) + "\n\n")
	for _, m := range ms {
		b.WriteString("-- migration " + m.name + "\nBEGIN;\n")
		b.WriteString(m.body(schema))
		b.WriteString("\n" + recordSQL(schema, m) + "\nCOMMIT;\n\n")
	}
	return b.String(), nil
}

// Migrate connects to dsn and brings schema up to the newest version. It
// is idempotent and safe to run from several nodes at once: everything
// happens in one transaction that first takes an advisory lock for the
// schema, so concurrent runs wait for one another and the later ones find
// nothing to do. A transaction-scoped lock also works through a
// transaction-mode pooler.
func Migrate(ctx context.Context, dsn, schema string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("migrate %s: connect: %w", schema, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return migrate(ctx, conn, schema)
}

// migrateLockKey is the advisory lock that serialises migrations of one
// schema across nodes.
func migrateLockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("herald-migrate:" + schema))
	return int64(h.Sum64())
}

func migrate(ctx context.Context, conn *pgx.Conn, schema string) error {
	if err := checkSchema(schema); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrate %s: %w", schema, err)
	}
	var enc string
	if err := conn.QueryRow(ctx, `SHOW server_encoding`).Scan(&enc); err != nil {
		return fmt.Errorf("migrate %s: read server encoding: %w", schema, err)
	}
	if enc != "UTF8" {
		return fmt.Errorf("migrate %s: database encoding is %s; the engine needs UTF8", schema, enc)
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLockKey(schema)); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if _, err := tx.Exec(ctx, bootstrapSQL(schema)); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT version FROM `+schema+`.schema_migrations`)
		if err != nil {
			return fmt.Errorf("read versions: %w", err)
		}
		versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return fmt.Errorf("read versions: %w", err)
		}
		applied := make(map[int]bool, len(versions))
		for _, v := range versions {
			applied[int(v)] = true
		}
		for _, m := range ms {
			if applied[m.version] {
				continue
			}
			if _, err := tx.Exec(ctx, m.body(schema)); err != nil {
				return fmt.Errorf("apply %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, recordSQL(schema, m)); err != nil {
				return fmt.Errorf("record %s: %w", m.name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate %s: %w", schema, err)
	}
	return nil
}
