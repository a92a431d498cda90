package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestRedisAddressStringOrList checks that engine.redis.address takes one
// address or a list of shards, as Centrifugo's does, from a file and from
// the environment, and what each makes.
func TestRedisAddressStringOrList(t *testing.T) {
	for _, c := range []struct {
		yaml   string
		shards [][]string
	}{
		{"log: {level: info}", [][]string{{"127.0.0.1:6379"}}},
		{"engine: {redis: {address: 10.0.0.1:6379}}", [][]string{{"10.0.0.1:6379"}}},
		{"engine: {redis: {address: [10.0.0.1:6379]}}", [][]string{{"10.0.0.1:6379"}}},
		{"engine: {redis: {address: [10.0.0.1:6379, 10.0.0.2:6379]}}", [][]string{{"10.0.0.1:6379"}, {"10.0.0.2:6379"}}},
		{"engine: {redis: {addresses: [10.0.0.1:26379, 10.0.0.2:26379], sentinel_master: m}}", [][]string{{"10.0.0.1:26379", "10.0.0.2:26379"}}},
	} {
		cfg, err := Parse([]byte(c.yaml))
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if got := cfg.Engine.Redis.Shards(); !reflect.DeepEqual(got, c.shards) {
			t.Errorf("%q: shards %q, want %q", c.yaml, got, c.shards)
		}
	}
	if _, err := Parse([]byte("engine: {redis: {address: {host: x}}}")); err == nil || !strings.Contains(err.Error(), "engine.redis.address") {
		t.Errorf("a mapping for address: %v, want a problem naming engine.redis.address", err)
	}
	cfg, err := Parse([]byte("log: {level: info}"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyEnv(&cfg, []string{"HERALD_ENGINE_REDIS_ADDRESS=10.0.0.1:6379,10.0.0.2:6379"}); err != nil {
		t.Fatalf("ApplyEnv: %v", err)
	}
	if got := cfg.Engine.Redis.Shards(); len(got) != 2 || got[1][0] != "10.0.0.2:6379" {
		t.Errorf("from the environment: shards %q, want two", got)
	}
}

// TestShardProblems checks the shard lists' validation, each problem
// naming its key.
func TestShardProblems(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"engine: {type: postgres, postgres: {dsn: 'postgres://a/x', shards: ['postgres://a/x', 'postgres://b/x']}}", "engine.postgres.shards: set either dsn"},
		{"engine: {type: postgres, postgres: {shards: ['postgres://a/x', 'postgres://a/x']}}", "engine.postgres.shards[1]: the same as engine.postgres.shards[0]"},
		{"engine: {type: postgres, postgres: {shards: ['postgres://a/x', '']}}", "engine.postgres.shards[1]: empty"},
		{"engine: {type: postgres, postgres: {listen_dsn: 'postgres://c/x', shards: ['postgres://a/x', 'postgres://b/x']}}", "engine.postgres.listen_dsn: not with shards"},
		{"engine: {type: postgres, postgres: {logical: {dsn: 'postgres://c/x'}, shards: ['postgres://a/x', 'postgres://b/x']}}", "engine.postgres.logical.dsn: not with shards"},
		{"engine: {type: redis, redis: {address: [a:1, b:1], addresses: [c:1]}}", "engine.redis.address: several addresses are shards"},
		{"engine: {type: redis, redis: {address: [a:1, a:1]}}", "engine.redis.address[1]: the same as engine.redis.address[0]"},
		{"engine: {type: nats, nats: {presence: redis}, redis: {address: [a:1, b:1]}}", "engine.redis.address: engine.nats.presence: redis keeps presence in one"},
	} {
		cfg, err := Parse([]byte(c.yaml))
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a problem containing %q", c.yaml, err, c.want)
		}
	}
	for _, ok := range []string{
		"engine: {type: postgres, postgres: {shards: ['postgres://a/x', 'postgres://b/x']}}",
		"engine: {type: redis, redis: {address: [a:1, b:1]}}",
	} {
		cfg, err := Parse([]byte(ok))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}
