package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/engine/redis"
	"github.com/heraldhq/herald/engine/sharded"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/testenv"
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

	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	prefix := "herald_t_" + hex.EncodeToString(b[:])
	t.Cleanup(func() { deleteSentinelPrefix(t, sentinels, master, prefix) })

	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Engine.Type = "redis"
	cfg.Engine.Redis.Prefix = prefix
	cfg.Engine.Redis.Shards = []config.RedisShardConfig{
		{Addresses: sentinels, SentinelMaster: master},
		{Address: standalone, DB: 1},
	}
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
		p := a.awaitPush(t, "publication on "+ch, 10*time.Second, func(p *wsPush) bool { return p.Channel == ch && p.Pub != nil })
		if want := fmt.Sprintf(`{"shard":%d}`, s); p.Pub.Offset != 1 || string(p.Pub.Data) != want {
			t.Errorf("%s: offset %d %s, want offset 1 %s", ch, p.Pub.Offset, p.Pub.Data, want)
		}
	}
	// The standalone shard keeps its keys in database 1, as configured.
	c := goredis.NewClient(&goredis.Options{Addr: standalone, DB: 1, Protocol: 2})
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if keys, err := c.Keys(ctx, prefix+":*").Result(); err != nil || len(keys) == 0 {
		t.Errorf("database 1 of the standalone shard: keys %v, %v; want the shard's", keys, err)
	}
}

// deleteSentinelPrefix removes a test's keys from the Sentinel set's
// master of the moment.
func deleteSentinelPrefix(t *testing.T, sentinels []string, master, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := goredis.NewFailoverClient(&goredis.FailoverOptions{SentinelAddrs: sentinels, MasterName: master, Protocol: 2, MaxRetries: -1})
	defer c.Close()
	keys, err := c.Keys(ctx, prefix+":*").Result()
	if err != nil {
		t.Errorf("list test keys: %v", err)
		return
	}
	if len(keys) > 0 {
		if err := c.Del(ctx, keys...).Err(); err != nil {
			t.Errorf("delete test keys: %v", err)
		}
	}
}

// TestRedisOneShard checks that engine.redis.shards with one item is the
// unsharded engine on that item's deployment (a Sentinel set here), not on
// engine.redis.address's default.
func TestRedisOneShard(t *testing.T) {
	sentinels := strings.Split(testenv.Require(t, "HERALD_TEST_REDIS_SENTINEL_ADDRS"), ",")
	master := testenv.Require(t, "HERALD_TEST_REDIS_SENTINEL_MASTER")
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	prefix := "herald_t_" + hex.EncodeToString(b[:])
	t.Cleanup(func() { deleteSentinelPrefix(t, sentinels, master, prefix) })
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
