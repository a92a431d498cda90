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
		shards []RedisShard
	}{
		{"log: {level: info}", []RedisShard{{Addrs: []string{"127.0.0.1:6379"}}}},
		{"engine: {redis: {address: 10.0.0.1:6379, db: 2}}", []RedisShard{{Addrs: []string{"10.0.0.1:6379"}, DB: 2}}},
		{"engine: {redis: {address: [10.0.0.1:6379]}}", []RedisShard{{Addrs: []string{"10.0.0.1:6379"}}}},
		{"engine: {redis: {address: [10.0.0.1:6379, 10.0.0.2:6379]}}", []RedisShard{{Addrs: []string{"10.0.0.1:6379"}}, {Addrs: []string{"10.0.0.2:6379"}}}},
		{"engine: {redis: {addresses: [10.0.0.1:26379, 10.0.0.2:26379], sentinel_master: m}}", []RedisShard{{Addrs: []string{"10.0.0.1:26379", "10.0.0.2:26379"}, SentinelMaster: "m"}}},
		{"engine: {redis: {shards: [{addresses: [10.0.0.1:26379, 10.0.0.2:26379], sentinel_master: a}, {address: 10.0.0.3:6379, db: 1}, {addresses: [10.0.0.1:26379], sentinel_master: b, db: 3}]}}",
			[]RedisShard{{Addrs: []string{"10.0.0.1:26379", "10.0.0.2:26379"}, SentinelMaster: "a"}, {Addrs: []string{"10.0.0.3:6379"}, DB: 1}, {Addrs: []string{"10.0.0.1:26379"}, SentinelMaster: "b", DB: 3}}},
	} {
		cfg, err := Parse([]byte(c.yaml))
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if got := cfg.Engine.Redis.RedisShards(); !reflect.DeepEqual(got, c.shards) {
			t.Errorf("%q: shards %+v, want %+v", c.yaml, got, c.shards)
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
	if got := cfg.Engine.Redis.RedisShards(); len(got) != 2 || got[1].Addrs[0] != "10.0.0.2:6379" {
		t.Errorf("from the environment: shards %+v, want two", got)
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
		{"engine: {type: redis, redis: {addresses: [s:1], shards: [{address: a:1}]}}", "engine.redis.addresses: not with shards"},
		{"engine: {type: redis, redis: {address: c:1, shards: [{address: a:1}]}}", "engine.redis.address: not with shards"},
		{"engine: {type: redis, redis: {address: 127.0.0.1:6379, shards: [{address: a:1}]}}", "engine.redis.address: not with shards"},
		{"engine: {type: redis, redis: {sentinel_master: m, shards: [{address: a:1}]}}", "engine.redis.sentinel_master: not with shards"},
		{"engine: {type: redis, redis: {db: 1, shards: [{address: a:1}]}}", "engine.redis.db: not with shards"},
		{"engine: {type: redis, redis: {cluster: true, shards: [{address: a:1}]}}", "engine.redis.cluster: not with shards"},
		{"engine: {type: nats, nats: {presence: redis}, redis: {shards: [{address: a:1}, {address: b:1}]}}", "engine.redis.shards: engine.nats.presence: redis keeps presence in one"},
		{"engine: {type: redis, redis: {shards: [{address: a:1}, {db: 1}]}}", "engine.redis.shards[1]: set address (a standalone server) or addresses and sentinel_master"},
		{"engine: {type: redis, redis: {shards: [{address: a:1, addresses: [s:1], sentinel_master: m}]}}", "engine.redis.shards[0].address: not with addresses"},
		{"engine: {type: redis, redis: {shards: [{addresses: [s:1, s:2]}]}}", "engine.redis.shards[0].sentinel_master: required with addresses"},
		{"engine: {type: redis, redis: {shards: [{address: a:1, sentinel_master: m}]}}", "engine.redis.shards[0].sentinel_master: only with addresses"},
		{"engine: {type: redis, redis: {shards: [{addresses: [s:1, ''], sentinel_master: m}]}}", "engine.redis.shards[0].addresses[1]: empty"},
		{"engine: {type: redis, redis: {shards: [{address: a:1, db: -1}]}}", "engine.redis.shards[0].db: -1: must not be negative"},
		{"engine: {type: redis, redis: {shards: [{address: a:1}, {address: a:1, db: 1}]}}", "engine.redis.shards[1]: the same deployment as engine.redis.shards[0]"},
		{"engine: {type: redis, redis: {shards: [{addresses: [s:1, s:2], sentinel_master: m}, {addresses: [s:3, s:2], sentinel_master: m}]}}", "engine.redis.shards[1]: the same deployment as engine.redis.shards[0]"},
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
		// One Sentinel set may watch the masters of several shards.
		"engine: {type: redis, redis: {shards: [{addresses: [s:1, s:2], sentinel_master: a}, {addresses: [s:1, s:2], sentinel_master: b}, {address: c:1, db: 2}]}}",
		"engine: {type: redis, redis: {password: p, min_replicas: 1, shards: [{addresses: [s:1], sentinel_master: a}]}}",
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

// TestCentrifugoSentinelShards checks that Centrifugo's sentinel_address,
// one shard per entry with its Sentinels separated by commas, converts to
// engine.redis.addresses (one entry) or engine.redis.shards (several),
// every shard with the one master name and database, and that the result
// passes validation.
func TestCentrifugoSentinelShards(t *testing.T) {
	for _, c := range []struct {
		file   string
		shards []RedisShard
	}{
		{`{"engine": {"type": "redis", "redis": {"sentinel_address": ["10.0.0.1:26379,10.0.0.2:26379"], "sentinel_master_name": "m", "db": 1}}}`,
			[]RedisShard{{Addrs: []string{"10.0.0.1:26379", "10.0.0.2:26379"}, SentinelMaster: "m", DB: 1}}},
		{`{"engine": {"type": "redis", "redis": {"address": "redis://127.0.0.1:6379", "sentinel_address": ["10.0.0.1:26379, 10.0.0.2:26379", "10.0.1.1:26379"], "sentinel_master_name": "m", "db": 2}}}`,
			[]RedisShard{{Addrs: []string{"10.0.0.1:26379", "10.0.0.2:26379"}, SentinelMaster: "m", DB: 2}, {Addrs: []string{"10.0.1.1:26379"}, SentinelMaster: "m", DB: 2}}},
	} {
		cfg, err := ParseCentrifugo([]byte(c.file), "config.json", nil)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: %v", c.file, err)
		}
		if got := cfg.Engine.Redis.RedisShards(); !reflect.DeepEqual(got, c.shards) {
			t.Errorf("%s: shards %+v, want %+v", c.file, got, c.shards)
		}
		out, err := ConvertCentrifugo([]byte(c.file), "config.json", nil)
		if err != nil {
			t.Fatalf("%s: convert: %v", c.file, err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("%s: the converted file: %v\n%s", c.file, err, out)
		}
		if err := back.Validate(); err != nil {
			t.Errorf("%s: the converted file: %v\n%s", c.file, err, out)
		}
		if got := back.Engine.Redis.RedisShards(); !reflect.DeepEqual(got, c.shards) {
			t.Errorf("%s: the converted file's shards %+v, want %+v\n%s", c.file, got, c.shards, out)
		}
	}
	// Sentinel sharding without a master name is refused, as Centrifugo
	// refuses it.
	file := `{"engine": {"type": "redis", "redis": {"sentinel_address": ["10.0.0.1:26379", "10.0.1.1:26379"]}}}`
	cfg, err := ParseCentrifugo([]byte(file), "config.json", nil)
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "engine.redis.shards[0].sentinel_master: required") {
		t.Errorf("no master name: %v, want a problem naming engine.redis.shards[0].sentinel_master", err)
	}
	for _, bad := range []string{`["10.0.0.1:26379", " , "]`, `[1]`} {
		_, err := ParseCentrifugo([]byte(`{"engine": {"redis": {"sentinel_address": `+bad+`}}}`), "config.json", nil)
		if err == nil || !strings.Contains(err.Error(), "engine.redis.sentinel_address") {
			t.Errorf("sentinel_address %s: %v, want a problem naming it", bad, err)
		}
	}
}

// TestCentrifugoClusterAddress checks Centrifugo's cluster_address: one
// entry, its seeds separated by commas, is Herald's one Cluster; several
// entries, which Centrifugo reads as several Clusters, are refused naming
// the key.
func TestCentrifugoClusterAddress(t *testing.T) {
	cfg, err := ParseCentrifugo([]byte(`{"engine": {"type": "redis", "redis": {"cluster_address": ["10.0.0.1:7000, 10.0.0.2:7000,10.0.0.3:7000"]}}}`), "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
	r := cfg.Engine.Redis
	if want := []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"}; !r.Cluster || !reflect.DeepEqual(r.Addresses, want) {
		t.Errorf("cluster %v, addresses %q; want a Cluster with seeds %q", r.Cluster, r.Addresses, want)
	}
	_, err = ParseCentrifugo([]byte(`{"engine": {"type": "redis", "redis": {"cluster_address": ["10.0.0.1:7000", "10.0.1.1:7000"]}}}`), "config.json", nil)
	if err == nil || !strings.Contains(err.Error(), "engine.redis.cluster_address: 2 entries are 2 Redis Clusters") {
		t.Errorf("two Clusters: %v, want a problem naming engine.redis.cluster_address", err)
	}
}
