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
