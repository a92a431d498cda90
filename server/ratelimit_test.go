package server

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// rateLimitRedisConfig is a memory-engine node whose redis_user_command
// buckets (3 history commands an hour per user) live in the Redis at
// addr, under prefix.
func rateLimitRedisConfig(addr, prefix string) config.Config {
	cfg := config.Default()
	l := &cfg.Client.RateLimit.RedisUserCommand
	l.Enabled = true
	l.History = hub.ChannelRateBuckets{RateBuckets: hub.RateBuckets{Enabled: true, Buckets: []hub.RateBucket{{Interval: time.Hour, Rate: 3}}}}
	l.Redis.Address = config.StringList{addr}
	l.Redis.Prefix = prefix
	return cfg
}

func historyCmd(id int) string {
	return `{"id":` + strconv.Itoa(id) + `,"history":{"channel":"room"}}`
}

// TestRateLimitRedisAcrossMemoryNodes: two nodes on the memory engine,
// which know nothing of each other, share the Redis of
// client.rate_limit.redis_user_command.redis: a user's commands on
// either node draw from one set of buckets.
func TestRateLimitRedisAcrossMemoryNodes(t *testing.T) {
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	prefix := "herald_t_rl_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Cleanup(func() {
		c := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2})
		defer c.Close()
		testenv.DeleteRedisKeys(t, c, prefix)
	})
	cfg := rateLimitRedisConfig(addr, prefix)
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
	a, b := connectClient(t, nodes[0], "alice"), connectClient(t, nodes[1], "alice")
	for i, c := range []*jsonclient.Client{a, b, a} {
		if m := c.Call(historyCmd(10 + i)); jsonclient.ErrorCode(m) == 111 {
			t.Fatalf("history %d of 3 refused: %v", i+1, m)
		}
	}
	jsonclient.WantError(t, b.Call(historyCmd(20)), 111)
	jsonclient.WantError(t, a.Call(historyCmd(21)), 111)
	// Another user has buckets of its own.
	if m := connectClient(t, nodes[1], "bob").Call(historyCmd(30)); jsonclient.ErrorCode(m) == 111 {
		t.Fatalf("bob refused with alice's buckets: %v", m)
	}
}

// TestRateLimitRedisDown: when the buckets' Redis cannot be reached (at
// start or later) the node starts and allows the commands, with a
// warning, as when the engine fails.
func TestRateLimitRedisDown(t *testing.T) {
	logs := testenv.NewLogWatch(slog.LevelWarn)
	cfg := rateLimitRedisConfig("127.0.0.1:"+strconv.Itoa(testenv.FreePort(t)), "herald_t_rl_down")
	s := startServerLog(t, cfg, slog.New(logs))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	c := connectClient(t, s, "alice")
	for i := range 5 {
		if m := c.Call(historyCmd(10 + i)); jsonclient.ErrorCode(m) == 111 {
			t.Fatalf("history %d refused with the buckets' Redis down: %v", i+1, m)
		}
	}
	logs.Await(t, "rate limit: the buckets' store did not answer; command allowed", 10*time.Second)
}
