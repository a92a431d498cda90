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
// layer converts when it reuses the engine's, as Herald's layer always
// does, and is refused, naming the key, when it is a Redis of its own.
func TestCentrifugoRateLimitRedis(t *testing.T) {
	const file = `{"engine":{"type":"redis","redis":{"address":"localhost:6379"}},
"client":{"rate_limit":{"redis_user_command":{"enabled":true,"default":{"enabled":true,"buckets":[{"interval":"1s","rate":60}]},"redis":%s}}}}`
	out, err := ConvertCentrifugo([]byte(strings.Replace(file, "%s", `{"reuse_from_engine":true}`, 1)), "config.json", nil)
	if err != nil {
		t.Fatalf("reuse_from_engine: %v", err)
	}
	if strings.Contains(string(out), "reuse_from_engine") || !strings.Contains(string(out), "redis_user_command") {
		t.Fatalf("converted:\n%s", out)
	}
	for _, redis := range []string{`{"address":"10.0.0.1:6379"}`, `{"reuse_from_engine":true,"address":"10.0.0.1:6379"}`, `{}`} {
		_, err := ConvertCentrifugo([]byte(strings.Replace(file, "%s", redis, 1)), "config.json", nil)
		if err == nil || !strings.Contains(err.Error(), "client.rate_limit.redis_user_command.redis: a Redis of its own") {
			t.Errorf("%s: %v, want a refusal naming the key", redis, err)
		}
	}
}
