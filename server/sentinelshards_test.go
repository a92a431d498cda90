package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/engine/redis"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestRedisSentinelShards runs two nodes on engine.redis.shards of two
// kinds, a Sentinel set (the test services') and a standalone server of
// the test's own in database 1: the nodes see each other, and a client on
// either node gets the publications of channels on both shards, with
// their offsets, published through the other node's API.
func TestRedisSentinelShards(t *testing.T) {
	sentinels := strings.Split(testenv.Require(t, "HERALD_TEST_REDIS_SENTINEL_ADDRS"), ",")
	master := testenv.Require(t, "HERALD_TEST_REDIS_SENTINEL_MASTER")
	port := testenv.FreePort(t)
	p := testenv.StartProcess(t, exec.Command(testenv.Binary(t, "redis-server"), "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"))
	standalone := p.WaitListening(t, port, 10*time.Second)

	prefix := sentinelPrefix(t, sentinels, master)

	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Engine.Type = "redis"
	cfg.Engine.Redis.Prefix = prefix
	cfg.Engine.Redis.Shards = []config.RedisShardConfig{
		{Addresses: sentinels, SentinelMaster: master},
		{Address: standalone, DB: 1},
	}
	checkTwoShardNodes(t, cfg)
	// The standalone shard keeps its keys in database 1, as configured.
	c := goredis.NewClient(&goredis.Options{Addr: standalone, DB: 1, Protocol: 2})
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if keys, err := c.Keys(ctx, prefix+":*").Result(); err != nil || len(keys) == 0 {
		t.Errorf("database 1 of the standalone shard: keys %v, %v; want the shard's", keys, err)
	}
}

// sentinelPrefix is a fresh key prefix whose keys are deleted from the
// Sentinel set's master when the test ends.
func sentinelPrefix(t *testing.T, sentinels []string, master string) string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	prefix := "herald_t_" + hex.EncodeToString(b[:])
	t.Cleanup(func() { deleteSentinelPrefix(t, sentinels, master, prefix) })
	return prefix
}

// deleteSentinelPrefix removes a test's keys from the Sentinel set's
// master of the moment.
func deleteSentinelPrefix(t *testing.T, sentinels []string, master, prefix string) {
	c := goredis.NewFailoverClient(&goredis.FailoverOptions{SentinelAddrs: sentinels, MasterName: master, Protocol: 2, MaxRetries: -1})
	defer c.Close()
	testenv.DeleteRedisKeys(t, c, prefix)
}

// TestRedisOneShard checks that engine.redis.shards with one item is the
// unsharded engine on that item's deployment (a Sentinel set here), not on
// engine.redis.address's default.
func TestRedisOneShard(t *testing.T) {
	sentinels := strings.Split(testenv.Require(t, "HERALD_TEST_REDIS_SENTINEL_ADDRS"), ",")
	master := testenv.Require(t, "HERALD_TEST_REDIS_SENTINEL_MASTER")
	prefix := sentinelPrefix(t, sentinels, master)
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Engine.Type = "redis"
	cfg.Engine.Redis.Prefix = prefix
	cfg.Engine.Redis.Shards = []config.RedisShardConfig{{Addresses: sentinels, SentinelMaster: master}}
	cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{HistorySize: 10, HistoryTTL: time.Duration(time.Minute)}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	if _, ok := s.Hub().Engine().(*redis.Engine); !ok {
		t.Fatalf("engine %T, want the Redis engine", s.Hub().Engine())
	}
	var res struct {
		Offset uint64 `json:"offset"`
	}
	mustAPI(t, s, "publish", map[string]any{"channel": "one", "data": map[string]int{"n": 1}}, &res)
	if res.Offset != 1 {
		t.Errorf("publish: offset %d, want 1 (history on the shard)", res.Offset)
	}
}
