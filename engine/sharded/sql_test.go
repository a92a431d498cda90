package sharded

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine/postgres"
)

// TestShardOfMatchesSQL checks that the SQL function shard_of, which the
// PostgreSQL engine's migrations install, places every channel where Go
// does, on both test clusters: names of every shape (empty, non-ASCII,
// long) and shard counts from 1 to 64.
func TestShardOfMatchesSQL(t *testing.T) {
	for _, s := range pgShards(t) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		if err := postgres.Migrate(ctx, s.dsn, s.schema); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
		conn, err := pgx.Connect(ctx, s.dsn)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer conn.Close(context.Background())
		var names []string
		names = append(names, "", "chat:index", "пользователь:42", "emoji 🎉", fmt.Sprintf("%0300d", 7))
		for i := range 300 {
			names = append(names, fmt.Sprintf("news:%d", i))
		}
		var ns []int32
		for n := int32(1); n <= 64; n++ {
			ns = append(ns, n)
		}
		rows, err := conn.Query(ctx, `SELECT c, n, `+s.schema+`.shard_of(c, n) FROM unnest($1::text[]) c, unnest($2::int[]) n`, names, ns)
		if err != nil {
			t.Fatalf("query shard_of: %v", err)
		}
		checked := 0
		for rows.Next() {
			var c string
			var n, got int32
			if err := rows.Scan(&c, &n, &got); err != nil {
				t.Fatalf("scan: %v", err)
			}
			if want := ShardOf(c, int(n)); int(got) != want {
				t.Errorf("shard_of(%q, %d) = %d in SQL, %d in Go", c, n, got, want)
			}
			checked++
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("rows: %v", err)
		}
		if want := len(names) * len(ns); checked != want {
			t.Fatalf("checked %d pairs, want %d", checked, want)
		}
		var serverVersion string
		_ = conn.QueryRow(ctx, "SHOW server_version").Scan(&serverVersion)
		t.Logf("PostgreSQL %s: %d channel/shard-count pairs agree", serverVersion, checked)
	}
}
