package config

import (
	"strings"
	"testing"
)

// TestRedisUserCommandNeedsSharedBuckets: `herald config check` refuses
// the cluster-wide rate limit layer on an engine that keeps no buckets,
// naming the key, and takes it on Redis.
func TestRedisUserCommandNeedsSharedBuckets(t *testing.T) {
	const limits = `
client:
  rate_limit:
    redis_user_command: {enabled: true, publish: {enabled: true, buckets: [{interval: 1s, rate: 5}]}}
`
	cfg, err := Parse([]byte("engine: {type: nats}" + limits))
	if err != nil {
		t.Fatal(err)
	}
	want := `client.rate_limit.redis_user_command.enabled: engine "nats" keeps no token buckets`
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("problems:\n%v\nwant one containing %s", err, want)
	}
	cfg, err = Parse([]byte("engine: {type: redis, redis: {address: 'localhost:6379'}}" + limits))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil && strings.Contains(err.Error(), "redis_user_command") {
		t.Fatalf("redis refused: %v", err)
	}
}

// TestCentrifugoRateLimitRedis: Centrifugo PRO's Redis of the cluster-wide
// layer converts: reuse_from_engine to the engine's buckets (no key), a
// Redis of its own to Herald's key of the same name with engine.redis's
// conversions; what cannot be taken is refused naming the key.
func TestCentrifugoRateLimitRedis(t *testing.T) {
	const file = `{"engine":{"type":"redis","redis":{"address":"localhost:6379"}},
"client":{"rate_limit":{"redis_user_command":{"enabled":true,"default":{"enabled":true,"buckets":[{"interval":"1s","rate":60}]},"redis":%s}}}}`
	convert := func(redis string) (Config, error) {
		t.Helper()
		out, err := ConvertCentrifugo([]byte(strings.Replace(file, "%s", redis, 1)), "config.json", nil)
		if err != nil {
			return Config{}, err
		}
		if strings.Contains(string(out), "reuse_from_engine") {
			t.Fatalf("%s converted:\n%s", redis, out)
		}
		return Parse(out)
	}
	cfg, err := convert(`{"reuse_from_engine":true}`)
	if err != nil {
		t.Fatalf("reuse_from_engine: %v", err)
	}
	if !cfg.Client.RateLimit.RedisUserCommand.Enabled {
		t.Fatal("the layer was lost")
	}
	if _, own, _ := cfg.RateLimitRedis(); own {
		t.Fatal("reuse_from_engine gave the buckets a Redis of their own")
	}
	cfg, err = convert(`{"address":"redis://:pw@10.0.0.1:6380/2","prefix":"rl","reuse_from_engine":false}`)
	if err != nil {
		t.Fatalf("a Redis of its own: %v", err)
	}
	r, own, err := cfg.RateLimitRedis()
	if err != nil || !own || len(r.Addrs) != 1 || r.Addrs[0] != "10.0.0.1:6380" || r.Password != "pw" || r.DB != 2 || r.Prefix != "rl" {
		t.Fatalf("converted to %+v %v %v", r, own, err)
	}
	for redis, want := range map[string]string{
		`{"reuse_from_engine":true,"address":"10.0.0.1:6379"}`: "client.rate_limit.redis_user_command.redis.address: not with 'reuse_from_engine: true'",
		`{}`: "client.rate_limit.redis_user_command.redis: want 'reuse_from_engine: true' or a Redis",
		`{"sentinel_address":["a:1","b:1"],"sentinel_master_name":"m"}`: "client.rate_limit.redis_user_command.redis.shards: one Redis deployment",
	} {
		cfg, err := convert(redis)
		if err == nil {
			// What Herald's checks refuse, not the conversion.
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a refusal containing %s", redis, err, want)
		}
	}
}

// TestRateLimitRedisCheck: a Redis of its own for the layer lifts the
// engine's requirement, and a block that cannot be one Redis deployment
// is refused naming the field.
func TestRateLimitRedisCheck(t *testing.T) {
	const limits = `
client:
  rate_limit:
    redis_user_command:
      enabled: true
      publish: {enabled: true, buckets: [{interval: 1s, rate: 5}]}
      redis: %s
`
	check := func(engine, redis string) error {
		t.Helper()
		cfg, err := Parse([]byte(engine + strings.Replace(limits, "%s", redis, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Validate()
	}
	if err := check("engine: {type: nats}", "{address: 'localhost:6379'}"); err != nil {
		t.Fatalf("nats with a Redis for the buckets: %v", err)
	}
	for redis, want := range map[string]string{
		"{address: [a:1, b:1]}":                                              "client.rate_limit.redis_user_command.redis.address: one Redis deployment",
		"{shards: [{address: a:1}]}":                                         "client.rate_limit.redis_user_command.redis.shards: one Redis deployment",
		"{address: a:1, addresses: [b:1, c:1]}":                              "client.rate_limit.redis_user_command.redis.addresses: not with 'address'",
		"{addresses: [b:1], sentinel_master: m, cluster: true}":              "client.rate_limit.redis_user_command.redis.cluster: not with 'sentinel_master'",
		"{password: pw, db: 2}":                                              "client.rate_limit.redis_user_command.redis.address: the section names no server",
		"{address: a:1, min_replicas: 1}":                                    "client.rate_limit.redis_user_command.redis.min_replicas:",
		"{address: a:1, tls: {enabled: true, ca_file: /nonexistent/ca.pem}}": "client.rate_limit.redis_user_command.redis.tls",
	} {
		if err := check("", redis); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a problem containing %s", redis, err, want)
		}
	}
}
