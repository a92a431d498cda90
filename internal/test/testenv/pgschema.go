package testenv

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresSchema gives t a schema of its own on the test PostgreSQL
// server (HERALD_TEST_POSTGRES_DSN; t is skipped without it): it takes
// LockPostgres, creates a schema named prefix and a random suffix, and
// returns the DSN, the schema and a connection t may use; the schema is
// dropped and the connection closed when t ends. Call it before starting
// anything that uses the schema, so that its cleanup runs after theirs.
func PostgresSchema(t testing.TB, prefix string) (dsn, schema string, conn *pgx.Conn) {
	t.Helper()
	dsn = Require(t, "HERALD_TEST_POSTGRES_DSN")
	LockPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to the test PostgreSQL: %v", err)
	}
	schema = prefix + strings.ToLower(rand.Text()[:12])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		_ = conn.Close(ctx)
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		_ = conn.Close(ctx)
	})
	return dsn, schema, conn
}
