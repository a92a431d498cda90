package testenv

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// DeleteRedisKeys removes every key under a test's prefix ("prefix:*")
// from c, in batches of SCAN, reporting failures to t: the cleanup the
// Redis-backed tests share, whatever client reaches their server
// (standalone, or a Sentinel set's master of the moment).
func DeleteRedisKeys(t testing.TB, c goredis.Cmdable, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, prefix+":*", 1000).Iterator()
	var batch []string
	flush := func() {
		if len(batch) > 0 {
			if err := c.Del(ctx, batch...).Err(); err != nil {
				t.Errorf("delete test keys: %v", err)
			}
			batch = batch[:0]
		}
	}
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 1000 {
			flush()
		}
	}
	flush()
	if err := iter.Err(); err != nil {
		t.Errorf("list test keys: %v", err)
	}
}
