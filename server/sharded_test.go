package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/engine/sharded"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestPostgresShards runs two nodes on two PostgreSQL shards (the
// PostgreSQL 15 and 18 test clusters) from engine.postgres.shards: the
// nodes see each other (heartbeats on shard 0), and clients on either
// node get the publications of channels on both shards, with their
// offsets, through either node's API.
func TestPostgresShards(t *testing.T) {
	second := testenv.Require(t, "HERALD_TEST_POSTGRES18_DSN")
	if second == os.Getenv("HERALD_TEST_POSTGRES_DSN") {
		// The PostgreSQL 18 step points both variables at PostgreSQL 18;
		// the default step runs this test on the two clusters.
		t.Skip("HERALD_TEST_POSTGRES_DSN is the PostgreSQL 18 cluster too: two shards need two clusters")
	}
	var schema string
	c := startPGCluster(t, 2, func(cfg *config.Config) {
		schema = cfg.Engine.Postgres.Schema
		cfg.Engine.Postgres.Shards = []string{cfg.Engine.Postgres.DSN, second}
		cfg.Engine.Postgres.DSN = ""
		cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{
			AllowSubscribeForClient: true, HistorySize: 10, HistoryTTL: time.Duration(time.Minute), ForceRecovery: true,
		}
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, second)
		if err != nil {
			t.Errorf("drop schema %s on shard 1: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s on shard 1: %v", schema, err)
		}
	})
	n1, n2 := c.nodes[0], c.nodes[1]
	if e, ok := n1.Hub().Engine().(*sharded.MapEngine); !ok || e.Shards() != 2 {
		t.Fatalf("engine %T, want a sharded engine of 2 shards", n1.Hub().Engine())
	}
	var info struct {
		Nodes []struct{} `json:"nodes"`
	}
	testenv.Eventually(t, "node 2's API to list both nodes", 15*time.Second, func() bool {
		mustAPI(t, n2, "info", struct{}{}, &info)
		return len(info.Nodes) == 2
	})
	var chans [2]string
	for i := 0; chans[0] == "" || chans[1] == ""; i++ {
		ch := fmt.Sprintf("room%d", i)
		if s := sharded.ShardOf(ch, 2); chans[s] == "" {
			chans[s] = ch
		}
	}
	a, b := mustDial(t, n1, "alice"), mustDial(t, n2, "bob")
	for _, ch := range chans {
		a.mustSubscribe(t, ch)
		b.mustSubscribe(t, ch)
	}
	for round := 1; round <= 2; round++ {
		for i, ch := range chans {
			mustAPI(t, c.nodes[round-1], "publish", map[string]any{"channel": ch, "data": map[string]int{"shard": i}}, nil)
			for _, cl := range []*wsClient{a, b} {
				p := cl.awaitPush(t, "publication on "+ch, 10*time.Second, func(p *jsonclient.Push) bool { return p.Channel == ch && p.Pub != nil })
				if want := fmt.Sprintf(`{"shard":%d}`, i); p.Pub.Offset != uint64(round) || string(p.Pub.Data) != want {
					t.Errorf("%s on %s: offset %d %s, want offset %d %s", cl.user, ch, p.Pub.Offset, p.Pub.Data, round, want)
				}
			}
		}
	}
	// Each channel's stream is in its shard's database alone.
	for i, dsn := range []string{c.dsn, second} {
		conn, err := pgx.Connect(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		for s, ch := range chans {
			var n int
			if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM "+schema+".streams WHERE channel = $1", ch).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 1, false: 0}[s == i]; n != want {
				t.Errorf("shard %d's database holds %d streams of %s (shard %d's channel), want %d", i, n, ch, s, want)
			}
		}
		_ = conn.Close(t.Context())
	}
}

// TestRedisShards runs two nodes on two Redis servers of the test's own,
// listed in engine.redis.address: the nodes see each other, and clients on
// either node get the publications of channels on both shards.
func TestRedisShards(t *testing.T) {
	bin := testenv.Binary(t, "redis-server")
	var addrs config.StringList
	for range 2 {
		port := testenv.FreePort(t)
		p := testenv.StartProcess(t, exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"))
		addrs = append(addrs, p.WaitListening(t, port, 10*time.Second))
	}
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Engine.Type = "redis"
	cfg.Engine.Redis.Address = addrs
	checkTwoShardNodes(t, cfg)
}

// checkTwoShardNodes starts two nodes on cfg, whose engine has two shards:
// the nodes see each other, and a client on node 2 gets, with offset 1,
// a publication made through node 1's API on a channel of each shard.
func checkTwoShardNodes(t *testing.T, cfg config.Config) {
	t.Helper()
	cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{
		AllowSubscribeForClient: true, HistorySize: 10, HistoryTTL: time.Duration(time.Minute), ForceRecovery: true,
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var nodes []*Server
	for _, name := range []string{"node1", "node2"} {
		cfg.Name = name
		s := startServer(t, cfg)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = s.Shutdown(ctx)
		})
		nodes = append(nodes, s)
	}
	if e, ok := nodes[0].Hub().Engine().(*sharded.MapEngine); !ok || e.Shards() != 2 {
		t.Fatalf("engine %T, want a sharded engine of 2 shards", nodes[0].Hub().Engine())
	}
	var info struct {
		Nodes []struct{} `json:"nodes"`
	}
	testenv.Eventually(t, "node 2's API to list both nodes", 15*time.Second, func() bool {
		mustAPI(t, nodes[1], "info", struct{}{}, &info)
		return len(info.Nodes) == 2
	})
	a := mustDial(t, nodes[1], "alice")
	for s := range 2 {
		var ch string
		for i := 0; ch == ""; i++ {
			if c := fmt.Sprintf("room%d", i); sharded.ShardOf(c, 2) == s {
				ch = c
			}
		}
		a.mustSubscribe(t, ch)
		mustAPI(t, nodes[0], "publish", map[string]any{"channel": ch, "data": map[string]int{"shard": s}}, nil)
		p := a.awaitPush(t, "publication on "+ch, 10*time.Second, func(p *jsonclient.Push) bool { return p.Channel == ch && p.Pub != nil })
		if want := fmt.Sprintf(`{"shard":%d}`, s); p.Pub.Offset != 1 || string(p.Pub.Data) != want {
			t.Errorf("%s: offset %d %s, want offset 1 %s", ch, p.Pub.Offset, p.Pub.Data, want)
		}
	}
}
