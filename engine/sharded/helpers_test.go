package sharded

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/postgres"
	"github.com/heraldhq/herald/engine/redis"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails since Go 1.24
	return hex.EncodeToString(b)
}

// pgShard is one PostgreSQL shard of a test: a database and a schema of
// the test's own, dropped when the test ends.
type pgShard struct{ dsn, schema string }

// pgShards returns two shards on the two test clusters (PostgreSQL 15 and
// 18) when both are configured, else two schemas of one database. The
// caller holds the machine-wide PostgreSQL lock.
func pgShards(t testing.TB) []pgShard {
	t.Helper()
	dsn := testenv.Require(t, "HERALD_TEST_POSTGRES_DSN")
	testenv.LockPostgres(t)
	second := os.Getenv("HERALD_TEST_POSTGRES18_DSN")
	if second == "" {
		second = dsn
	}
	return []pgShard{newPGShard(t, dsn), newPGShard(t, second)}
}

func newPGShard(t testing.TB, dsn string) pgShard {
	schema := "herald_t_" + randomToken(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return pgShard{dsn: dsn, schema: schema}
}

// pgConfigs are the shards' engine configurations, quick to notice
// failures, for a node whose id is node ("" for a random one).
func pgConfigs(shards []pgShard, node string) []postgres.Config {
	out := make([]postgres.Config, len(shards))
	for i, s := range shards {
		out[i] = postgres.Config{
			DSN: s.dsn, Schema: s.schema, NodeID: node,
			JanitorInterval: 50 * time.Millisecond, StreamSweepInterval: 200 * time.Millisecond,
			ListenerPing: time.Second, ReconnectMin: 20 * time.Millisecond, ReconnectMax: 500 * time.Millisecond,
			WriteTimeout: 2 * time.Second, Logger: testenv.Logger(),
		}
	}
	return out
}

// redisConfigs are one configuration per address, each with a prefix of
// the test's own whose keys are deleted when t ends.
func redisConfigs(t testing.TB, addrs ...string) []redis.Config {
	t.Helper()
	out := make([]redis.Config, len(addrs))
	for i, addr := range addrs {
		prefix := "herald_t_" + randomToken(6)
		t.Cleanup(func() { deletePrefix(t, addr, prefix) })
		out[i] = redis.Config{
			Addrs: []string{addr}, Prefix: prefix, HistoryMetaTTL: 10 * time.Minute,
			HealthInterval: 200 * time.Millisecond, ReconnectMin: 10 * time.Millisecond, ReconnectMax: 200 * time.Millisecond,
			Logger: testenv.Logger(),
		}
	}
	return out
}

// deletePrefix removes every key of a test's prefix; a server that is
// gone (a test's own) has nothing to delete.
func deletePrefix(t testing.TB, addr, prefix string) {
	c := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c.Ping(ctx).Err() != nil {
		return
	}
	testenv.DeleteRedisKeys(t, c, prefix)
}

// newPostgres and newRedis make a sharded engine of that kind over cfgs,
// as Open does for several stores, with the node id and logger of the
// first configuration.
func newPostgres(ctx context.Context, cfgs []postgres.Config) (*Engine, error) {
	return buildKind(ctx, postgres.Kind(), cfgs, func(c postgres.Config) engine.Wiring {
		return engine.Wiring{NodeID: c.NodeID, Logger: c.Logger}
	})
}

func newRedis(ctx context.Context, cfgs []redis.Config) (*Engine, error) {
	return buildKind(ctx, redis.Kind(), cfgs, func(c redis.Config) engine.Wiring {
		return engine.Wiring{NodeID: c.NodeID, Logger: c.Logger}
	})
}

func buildKind[C any](ctx context.Context, kind engine.Kind, cfgs []C, wiring func(C) engine.Wiring) (*Engine, error) {
	if len(cfgs) == 0 {
		return nil, errors.New("no shards")
	}
	stores := make([]any, len(cfgs))
	for i, c := range cfgs {
		stores[i] = c
	}
	return build(ctx, kind, stores, wiring(cfgs[0]))
}
