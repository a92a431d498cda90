package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestMigrateEveryShard checks that `herald migrate --config` with
// engine.postgres.shards migrates every shard's database.
func TestMigrateEveryShard(t *testing.T) {
	first := testenv.Require(t, "HERALD_TEST_POSTGRES_DSN")
	testenv.LockPostgres(t)
	second := os.Getenv("HERALD_TEST_POSTGRES18_DSN")
	if second == "" {
		second = first
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	schema := "herald_t_" + hex.EncodeToString(b[:])
	dsns := []string{first, second}
	t.Cleanup(func() {
		for _, dsn := range dsns {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if conn, err := pgx.Connect(ctx, dsn); err == nil {
				_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
				_ = conn.Close(ctx)
			}
			cancel()
		}
	})
	cfg := writeFile(t, fmt.Sprintf("engine:\n  type: postgres\n  postgres:\n    schema: %s\n    shards: [%q, %q]\n", schema, first, second))
	out, _, err := run(t, "migrate", "--config", cfg)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if want := "shard 0: schema " + schema + " is up to date\nshard 1: schema " + schema + " is up to date\n"; out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	for i, dsn := range dsns {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		var ok bool
		err = conn.QueryRow(ctx, "SELECT to_regproc($1) IS NOT NULL", schema+".shard_of").Scan(&ok)
		_ = conn.Close(ctx)
		cancel()
		if err != nil || !ok {
			t.Errorf("shard %d: %s.shard_of exists: %v, %v", i, schema, ok, err)
		}
	}
}
