package redis

import (
	"context"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
)

var _ engine.RateLimiter = (*Engine)(nil)

// takeRate is GCRA (the generic cell rate algorithm, a token bucket kept
// as one time) over the buckets of one key, all or none: KEYS[i] holds
// bucket i's theoretical arrival time in milliseconds of the Redis clock
// (one clock for every node), ARGV[2i-1] and ARGV[2i] its interval in
// milliseconds and its rate. A bucket allows an operation when, after it,
// the arrival time is at most one interval ahead of now; each key expires
// once its bucket is full again.
var takeRate = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local tats = {}
for i = 1, #KEYS do
  local interval = tonumber(ARGV[2*i-1])
  local tat = tonumber(redis.call('GET', KEYS[i]) or now)
  if tat < now then tat = now end
  tat = tat + interval / tonumber(ARGV[2*i])
  if tat - now > interval then return 0 end
  tats[i] = tat
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], string.format('%.3f', tats[i]), 'PX', math.max(1, math.ceil(tats[i] - now)))
end
return 1`)

// rateKeys names the buckets of key: "<prefix>:rl:{<key>}:<i>", one hash
// tag so that one script holds them all in Redis Cluster.
func (k keyspace) rateKeys(key string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = k.tagged("rl", key) + ":" + strconv.Itoa(i)
	}
	return out
}

// TakeRate implements engine.RateLimiter.
func (e *Engine) TakeRate(ctx context.Context, key string, buckets []engine.RateBucket) (bool, error) {
	if len(buckets) == 0 {
		return true, nil
	}
	if err := e.life.Usable(ctx); err != nil {
		return false, err
	}
	return takeRateOn(ctx, e.client, e.keys, key, buckets, "redis engine")
}

// takeRateOn runs takeRate for key's buckets on client; who starts the
// error (the engine, or a RateLimiter of its own).
func takeRateOn(ctx context.Context, client goredis.Scripter, keys keyspace, key string, buckets []engine.RateBucket, who string) (bool, error) {
	args := make([]any, 0, 2*len(buckets))
	for _, b := range buckets {
		args = append(args, b.Interval.Milliseconds(), b.Rate)
	}
	ok, err := takeRate.Run(ctx, client, keys.rateKeys(key, len(buckets)), args...).Int()
	if err != nil {
		return false, fmt.Errorf("%s: rate limit %s: %w", who, key, err)
	}
	return ok == 1, nil
}
