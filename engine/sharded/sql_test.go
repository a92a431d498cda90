package sharded

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine/enginetest"
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

// TestPublishFromSQLOnItsShard checks publish() from SQL on a sharded
// cluster: on the database of the channel's shard it reaches a node's
// subscriber; on the other shard's database it is refused with an error
// naming the right shard, and nothing is stored there.
func TestPublishFromSQLOnItsShard(t *testing.T) {
	shards := pgShards(t)
	rec := newRecorder()
	e := enginetest.NewEngine(t, func(ctx context.Context) (*Engine, error) { return newPostgres(ctx, pgConfigs(shards, "")) })
	enginetest.StartEngine(t, e, rec)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for home := range 2 {
		ch := channelOn(t, 2, home, "sql")
		if err := e.Subscribe(ctx, ch); err != nil {
			t.Fatalf("Subscribe: %v", err)
		}
		other := 1 - home
		conns := make([]*pgx.Conn, 2)
		for i, s := range shards {
			c, err := pgx.Connect(ctx, s.dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			conns[i] = c
		}
		var where int
		if err := conns[home].QueryRow(ctx, "SELECT "+shards[home].schema+".shard_of($1, 2)", ch).Scan(&where); err != nil || where != home {
			t.Fatalf("shard_of in SQL: %d, %v; want %d", where, err, home)
		}
		if _, err := conns[home].Exec(ctx, "SELECT "+shards[home].schema+".publish($1, '\"from sql\"', 10, '1 minute')", ch); err != nil {
			t.Fatalf("publish on the channel's shard: %v", err)
		}
		rec.await(t, ch, `"from sql"`)
		_, err := conns[other].Exec(ctx, "SELECT "+shards[other].schema+".publish_bytes($1, 'x'::bytea, 10, '1 minute')", ch)
		want := fmt.Sprintf(`channel "%s" belongs to shard %d of 2, and this database is shard %d`, ch, home, other)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("publish on the other shard: %v, want an error containing %q", err, want)
		}
		// The map functions refuse the same way (migration 0007).
		for _, q := range []string{".map_publish($1, 'k', '{}')", ".map_remove($1, 'k')"} {
			_, err := conns[other].Exec(ctx, "SELECT "+shards[other].schema+q, ch)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%s on the other shard: %v, want an error containing %q", q, err, want)
			}
		}
		var n int
		if err := conns[other].QueryRow(ctx, "SELECT count(*) FROM "+shards[other].schema+".streams WHERE channel = $1", ch).Scan(&n); err != nil || n != 0 {
			t.Errorf("the other shard holds %d streams of the channel (%v), want 0", n, err)
		}
	}
}
