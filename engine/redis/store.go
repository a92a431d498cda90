package redis

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
)

var _ engine.Store = (*Engine)(nil)

// dropIfUnchanged deletes each field of KEYS[1] named in ARGV whose value
// is still the one that follows it in ARGV.
var dropIfUnchanged = goredis.NewScript(`
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i+1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return 0`)

// The Store keeps a bucket as one hash (keyspace.store), each field's
// value its expiry in Unix milliseconds (8 bytes, big-endian, 0 for none)
// followed by the value. Redis expires whole keys only (field expiry
// needs Redis 7.4), so an expired field is filtered out on every read
// and deleted by the scans that find it; nodes scan their buckets
// periodically, which keeps a bucket from growing with dead entries.

func encodeStoreEntry(value []byte, expireAt time.Time) []byte {
	b := make([]byte, 8+len(value))
	if !expireAt.IsZero() {
		binary.BigEndian.PutUint64(b, uint64(expireAt.UnixMilli()))
	}
	copy(b[8:], value)
	return b
}

func decodeStoreEntry(raw string) (engine.StoreEntry, bool) {
	if len(raw) < 8 {
		return engine.StoreEntry{}, false
	}
	var en engine.StoreEntry
	if ms := binary.BigEndian.Uint64([]byte(raw[:8])); ms != 0 {
		en.ExpireAt = time.UnixMilli(int64(ms))
	}
	en.Value = []byte(raw[8:])
	return en, true
}

// StoreSet implements engine.Store.
func (e *Engine) StoreSet(ctx context.Context, bucket, key string, value []byte, expireAt time.Time) error {
	if err := e.life.Usable(ctx); err != nil {
		return err
	}
	if err := e.client.HSet(ctx, e.keys.store(bucket), key, encodeStoreEntry(value, expireAt)).Err(); err != nil {
		return fmt.Errorf("redis engine: store set %s/%s: %w", bucket, key, err)
	}
	return nil
}

// StoreGet implements engine.Store.
func (e *Engine) StoreGet(ctx context.Context, bucket string, keys []string) (map[string]engine.StoreEntry, error) {
	if err := e.life.Usable(ctx); err != nil {
		return nil, err
	}
	out := make(map[string]engine.StoreEntry, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	vals, err := e.client.HMGet(ctx, e.keys.store(bucket), keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("redis engine: store get from %s: %w", bucket, err)
	}
	now := time.Now()
	for i, v := range vals {
		raw, ok := v.(string)
		if !ok {
			continue
		}
		if en, ok := decodeStoreEntry(raw); ok && en.Live(now) {
			out[keys[i]] = en
		}
	}
	return out, nil
}

// StoreDelete implements engine.Store.
func (e *Engine) StoreDelete(ctx context.Context, bucket string, keys []string) error {
	if err := e.life.Usable(ctx); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	if err := e.client.HDel(ctx, e.keys.store(bucket), keys...).Err(); err != nil {
		return fmt.Errorf("redis engine: store delete from %s: %w", bucket, err)
	}
	return nil
}

// StoreScan implements engine.Store. It reads the bucket in pages
// (HSCAN), so a large bucket does not block the server, and deletes the
// expired fields it meets.
func (e *Engine) StoreScan(ctx context.Context, bucket string, fn func(string, engine.StoreEntry) error) error {
	if err := e.life.Usable(ctx); err != nil {
		return err
	}
	key := e.keys.store(bucket)
	now := time.Now()
	var cursor uint64
	for {
		kv, next, err := e.client.HScan(ctx, key, cursor, "", 500).Result()
		if err != nil {
			return fmt.Errorf("redis engine: store scan of %s: %w", bucket, err)
		}
		var dead []any
		for i := 0; i+1 < len(kv); i += 2 {
			en, ok := decodeStoreEntry(kv[i+1])
			if !ok || !en.Live(now) {
				dead = append(dead, kv[i], kv[i+1])
				continue
			}
			if err := fn(kv[i], en); err != nil {
				return err
			}
		}
		if len(dead) > 0 {
			// Deleted only if unchanged since the read, so that an entry
			// set again meanwhile is kept.
			if err := dropIfUnchanged.Run(ctx, e.client, []string{key}, dead...).Err(); err != nil {
				return fmt.Errorf("redis engine: store scan of %s: drop expired: %w", bucket, err)
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}
