package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/wire"
)

var _ engine.MapBroker = (*Engine)(nil)

// Map channels keep, next to the channel's stream and meta and in the
// same hash tag (so one script changes them together):
//
//	<prefix>:mv:{<ch>}  hash: key -> "<offset>:<encoded publication>"
//	<prefix>:mk:{<ch>}  sorted set of the keys, all scored 0: read in key order (ZRANGEBYLEX)
//	<prefix>:mx:{<ch>}  sorted set: keys with a TTL, scored by expiry (ms, Redis clock)
//	<prefix>:mo:{<ch>}  hash: the stream options of the last change ("s" size, "t" ttl ms, "m" meta ttl ms),
//	                    kept as long as the stream's meta
//	<prefix>:mr:{<ch>}  hash: key -> "<version>:<version epoch>" of the keys whose last change had a version
//
// and, across channels, <prefix>:mexp, a sorted set of the channels with
// keys to expire, scored by the earliest expiry: the janitor of every node
// reads it (it is not in a channel's slot, so it is written apart from the
// change; a channel missing from it after a race is put back by its next
// change with a TTL).
func (k keyspace) mapKeys(ch string) []string {
	return []string{k.stream(ch), k.meta(ch), k.tagged("mv", ch), k.tagged("mk", ch), k.tagged("mx", ch), k.tagged("mo", ch), k.tagged("mr", ch)}
}

func (k keyspace) mapExpiring() string { return k.prefix + ":mexp" }

// mapChangeScript records a change of a map channel: the stream entry and
// its publication (as publishScript), then the state.
//
//	KEYS: stream, meta, values, keys, expiry, options, versions,
//	      and the idempotency key's result when the change has one
//	ARGV: body, size, ttl ms, meta ttl ms, epoch candidate, pub/sub channel,
//	      key, removed ('1'), key ttl ms, skip missing ('1'), touch ('1'), only if due ('1'),
//	      max keys (0: no bound), key mode ('', 'if_new' or 'if_exists'),
//	      version (0: none), version epoch, idempotent result ttl ms,
//	      expected offset ('': no compare-and-swap), expected epoch
//	returns {offset, epoch, earliest expiry of the channel's keys or -1}, or
//	{-1, epoch, -1} for a new key over max keys, {-2, epoch, -1} for a
//	publication its key mode refused, {-3, epoch, -1} for a version not
//	above the key's, {-4, first epoch, first offset} for an idempotency key
//	already seen, {-5, epoch, top offset} for a key not at the expected
//	position, {-6, epoch, top offset} for a removal of a missing key with
//	skip missing (nothing changed in each case)
var mapChangeScript = goredis.NewScript(luaNow + replaceAll(luaEnsureMeta, "EPOCH", "5", "METATTL", "4") + `
local key = ARGV[7]
local removed = ARGV[8] == '1'
local keyTTL = tonumber(ARGV[9])
local exp = redis.call('zscore', KEYS[5], key)
local alive = redis.call('hexists', KEYS[3], key) == 1 and ((not exp) or tonumber(exp) > now)
local function earliest()
  local first = redis.call('zrange', KEYS[5], 0, 0, 'WITHSCORES')
  if #first > 0 then return tonumber(first[2]) end
  return -1
end
local function unchanged()
  return {tonumber(redis.call('hget', KEYS[2], 's') or '0'), epoch, earliest()}
end
if KEYS[8] then
  local first = redis.call('get', KEYS[8])
  if first then
    local sep = string.find(first, ':', 1, true)
    return {-4, string.sub(first, sep + 1), tonumber(string.sub(first, 1, sep - 1))}
  end
end
if ARGV[12] == '1' and ((not exp) or tonumber(exp) > now) then
  return unchanged()
end
if (not removed) and ARGV[11] == '1' and alive then
  if keyTTL > 0 then redis.call('zadd', KEYS[5], now + keyTTL, key) end
  return unchanged()
end
if (not removed) and ((ARGV[14] == 'if_new' and alive) or (ARGV[14] == 'if_exists' and not alive)) then
  return {-2, epoch, -1}
end
if ARGV[18] ~= '' then
  local top = tonumber(redis.call('hget', KEYS[2], 's') or '0')
  local held = alive and redis.call('hget', KEYS[3], key)
  if (not held) or string.sub(held, 1, string.find(held, ':', 1, true) - 1) ~= ARGV[18] or epoch ~= ARGV[19] then
    return {-5, epoch, top}
  end
end
if removed and ARGV[10] == '1' and not alive then
  return {-6, epoch, tonumber(redis.call('hget', KEYS[2], 's') or '0')}
end
local version = tonumber(ARGV[15])
if (not removed) and version > 0 and alive then
  local held = redis.call('hget', KEYS[7], key)
  if held then
    local sep = string.find(held, ':', 1, true)
    if tonumber(string.sub(held, 1, sep - 1)) >= version and string.sub(held, sep + 1) == ARGV[16] then
      return {-3, epoch, -1}
    end
  end
end
local maxKeys = tonumber(ARGV[13])
if (not removed) and maxKeys > 0 and redis.call('hexists', KEYS[3], key) == 0 and redis.call('zcard', KEYS[4]) >= maxKeys then
  return {-1, epoch, -1}
end
` + luaAppendBody + `
if removed or (version == 0 and not alive) then
  redis.call('hdel', KEYS[7], key)
elseif version > 0 then
  redis.call('hset', KEYS[7], key, ARGV[15] .. ':' .. ARGV[16])
end
-- otherwise a change without a version keeps the key's, as Centrifugo's brokers do
if removed then
  redis.call('hdel', KEYS[3], key)
  redis.call('zrem', KEYS[4], key)
  redis.call('zrem', KEYS[5], key)
else
  redis.call('hset', KEYS[3], key, id .. ':' .. ARGV[1])
  redis.call('zadd', KEYS[4], 0, key)
  if keyTTL > 0 then
    redis.call('zadd', KEYS[5], now + keyTTL, key)
  else
    redis.call('zrem', KEYS[5], key)
  end
end
redis.call('hset', KEYS[6], 's', ARGV[2], 't', ARGV[3], 'm', ARGV[4])
redis.call('pexpire', KEYS[6], ARGV[4])
if KEYS[8] then
  redis.call('set', KEYS[8], offset .. ':' .. epoch, 'PX', ARGV[17])
end
return {offset, epoch, earliest()}
`)

// mapExpireScript removes keys of a map channel whose TTL passed, each as
// a change (a stream entry and its publication, as mapChangeScript's
// removal), and skips the keys that are no longer due (touched, set again
// or removed meanwhile, by this node or another).
//
//	KEYS: stream, meta, values, keys, expiry, options, versions
//	ARGV: '' (unused), size, ttl ms, meta ttl ms, epoch candidate, pub/sub channel,
//	      then a key and its encoded removal for each key
//	returns the number of keys removed
var mapExpireScript = goredis.NewScript(luaNow + replaceAll(luaEnsureMeta, "EPOCH", "5", "METATTL", "4") + `
local gone = {}
local bodies = {}
for i = 7, #ARGV, 2 do
  local exp = redis.call('zscore', KEYS[5], ARGV[i])
  if exp and tonumber(exp) <= now then
    gone[#gone + 1] = ARGV[i]
    bodies[#bodies + 1] = ARGV[i + 1]
  end
end
local removed = #gone
if removed > 0 then
  -- One offset allocation for all of them; key j gets first + j.
  local first = redis.call('hincrby', KEYS[2], 's', removed) - removed
  -- Only the entries the stream keeps are appended: XADD's MAXLEN would
  -- trim the others at once.
  local skip = removed - tonumber(ARGV[2])
  for j = 1, removed do
    local id = string.format('%d', first + j)
    if j > skip then
      redis.call('xadd', KEYS[1], 'MAXLEN', ARGV[2], id .. '-0', 'd', bodies[j])
    end
    if ARGV[6] ~= '' then
      redis.call('publish', ARGV[6], 'h' .. id .. ':' .. epoch .. ':' .. bodies[j])
    end
  end
  -- One command per structure for all of them, not four per key.
  redis.call('hdel', KEYS[3], unpack(gone))
  redis.call('zrem', KEYS[4], unpack(gone))
  redis.call('zrem', KEYS[5], unpack(gone))
  redis.call('hdel', KEYS[7], unpack(gone))
  redis.call('pexpire', KEYS[1], ARGV[3])
  redis.call('hset', KEYS[6], 's', ARGV[2], 't', ARGV[3], 'm', ARGV[4])
  redis.call('pexpire', KEYS[6], ARGV[4])
end
return removed
`)

// mapStateScript reads a page of the state in key order and the stream's
// position, creating the position when there is none.
//
//	KEYS: stream, meta, values, keys, expiry
//	ARGV: epoch candidate, meta ttl ms, cursor ('' for the first page), limit,
//	      the one key to read ('' for a page)
//	returns {top offset, epoch, more (0/1), key, value, key, value, ...}
var mapStateScript = goredis.NewScript(luaNow + replaceAll(luaEnsureMeta, "EPOCH", "1", "METATTL", "2") + `
local min = '-'
if ARGV[3] ~= '' then min = '(' .. ARGV[3] end
local limit = tonumber(ARGV[4])
local keys
if ARGV[5] ~= '' then
  keys = {}
  if redis.call('zscore', KEYS[4], ARGV[5]) then keys[1] = ARGV[5] end
else
  keys = redis.call('zrangebylex', KEYS[4], min, '+', 'LIMIT', 0, limit + 1)
end
local out = {tonumber(redis.call('hget', KEYS[2], 's') or '0'), epoch, 0}
local n = #keys
if n > limit then
  out[3] = 1
  n = limit
end
for i = 1, n do
  local exp = redis.call('zscore', KEYS[5], keys[i])
  if (not exp) or tonumber(exp) > now then
    local v = redis.call('hget', KEYS[3], keys[i])
    if v then
      out[#out + 1] = keys[i]
      out[#out + 1] = v
    end
  end
end
if out[3] == 1 then out[#out + 1] = keys[n] end
return out
`)

// mapStatsScript counts the keys that have not expired.
//
//	KEYS: keys, expiry
var mapStatsScript = goredis.NewScript(luaNow + `
return redis.call('zcard', KEYS[1]) - redis.call('zcount', KEYS[2], '-inf', now)
`)

// MapPublish records a change of a map channel in one script call.
func (e *Engine) MapPublish(ctx context.Context, ch string, pub *engine.Publication, opts engine.MapPublishOptions) (engine.StreamPosition, error) {
	switch {
	case pub == nil:
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: nil publication", ch)
	case pub.Key == "":
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: empty key", ch)
	case !opts.Valid():
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: StreamSize and StreamTTL must both be positive, and IdempotentResultTTL with an IdempotencyKey", ch)
	case ch == "":
		return engine.StreamPosition{}, fmt.Errorf("map publish: %w", errEmptyChannel)
	}
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return engine.StreamPosition{}, fmt.Errorf("map publish %q: %w", ch, err)
	}
	p := *pub
	p.Time = time.Now().UnixMilli()
	if p.Removed {
		p.Data = nil
	}
	sp, err := e.mapChange(ctx, ch, &p, opts)
	if err != nil {
		// sp is the first change's position for ErrMapDuplicate, the
		// current one for ErrMapPositionMismatch and a skipped removal's
		// ErrMapKeyNotFound, and zero otherwise.
		return sp, fmt.Errorf("map publish %q: %w", ch, err)
	}
	return sp, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// mapChange runs mapChangeScript and keeps the channel's place in the
// expiry index.
func (e *Engine) mapChange(ctx context.Context, ch string, p *engine.Publication, opts engine.MapPublishOptions) (engine.StreamPosition, error) {
	buf := e.bufs.Get()
	defer e.bufs.Put(buf)
	*buf = wire.AppendPublication(*buf, p)
	keys := e.keys.mapKeys(ch)
	if opts.IdempotencyKey != "" {
		keys = append(keys, e.keys.idempotency(ch, opts.IdempotencyKey))
	}
	v, err := mapChangeScript.Run(ctx, e.client, keys, e.mapChangeArgs(ch, *buf, p, opts)...).Result()
	if err != nil {
		return engine.StreamPosition{}, err
	}
	r, ok := v.([]any)
	if !ok || len(r) != 3 {
		return engine.StreamPosition{}, fmt.Errorf("%w: %v", errReply, v)
	}
	offset, ok1 := r[0].(int64)
	epoch, ok2 := r[1].(string)
	next, ok3 := r[2].(int64)
	if !ok1 || !ok2 || !ok3 {
		return engine.StreamPosition{}, fmt.Errorf("%w: %v", errReply, v)
	}
	switch {
	case offset == -1:
		return engine.StreamPosition{}, engine.ErrMapKeyLimit
	case offset == -2 && opts.KeyMode == engine.MapKeyIfNew:
		return engine.StreamPosition{}, engine.ErrMapKeyExists
	case offset == -2:
		return engine.StreamPosition{}, engine.ErrMapKeyNotFound
	case offset == -3:
		return engine.StreamPosition{}, engine.ErrMapVersion
	case offset == -4:
		return engine.StreamPosition{Offset: uint64(next), Epoch: epoch}, engine.ErrMapDuplicate
	case offset == -5:
		return engine.StreamPosition{Offset: uint64(next), Epoch: epoch}, engine.ErrMapPositionMismatch
	case offset == -6: // a removal of a missing key with SkipMissingRemove
		// With the stream's position, as Centrifugo's Lua answers it
		// (centrifuge v0.40.1 map_broker_add.lua, key_not_found).
		return engine.StreamPosition{Offset: uint64(next), Epoch: epoch}, engine.ErrMapKeyNotFound
	}
	if next >= 0 && opts.KeyTTL > 0 {
		if err := e.client.ZAdd(ctx, e.keys.mapExpiring(), goredis.Z{Score: float64(next), Member: ch}).Err(); err != nil {
			return engine.StreamPosition{}, fmt.Errorf("expiry index: %w", err)
		}
	}
	return engine.StreamPosition{Offset: uint64(offset), Epoch: epoch}, nil
}

// mapChangeArgs are mapChangeScript's arguments for p, encoded in enc.
func (e *Engine) mapChangeArgs(ch string, enc []byte, p *engine.Publication, opts engine.MapPublishOptions) []any {
	// Only if due ('0'): expiry has a script of its own (mapExpireScript).
	var expected struct{ offset, epoch string }
	if w := opts.ExpectedPosition; w != nil {
		expected.offset, expected.epoch = strconv.FormatUint(w.Offset, 10), w.Epoch
	}
	return []any{enc, opts.StreamSize, millis(opts.StreamTTL), millis(e.metaTTL(opts.MetaTTL)), newEpoch(), e.keys.pubsubChannel(ch),
		p.Key, flag(p.Removed), millis(opts.KeyTTL), flag(opts.SkipMissingRemove), flag(opts.TouchIfExists), "0",
		opts.MaxKeys, string(opts.KeyMode), strconv.FormatUint(opts.Version, 10), opts.VersionEpoch,
		millis(opts.IdempotentResultTTL), expected.offset, expected.epoch}
}

// MapState reads a page of ch's state with its stream position in one
// script call.
func (e *Engine) MapState(ctx context.Context, ch string, req engine.MapStateRequest) (engine.MapStatePage, error) {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return engine.MapStatePage{}, fmt.Errorf("map state %q: %w", ch, err)
	}
	if req.Limit <= 0 {
		return engine.MapStatePage{}, fmt.Errorf("map state %q: limit %d, want a positive one", ch, req.Limit)
	}
	keys := e.keys.mapKeys(ch)[:5]
	v, err := mapStateScript.Run(ctx, e.client, keys, newEpoch(), millis(e.metaTTL(req.MetaTTL)), req.Cursor, req.Limit, req.Key).Result()
	if err != nil {
		return engine.MapStatePage{}, fmt.Errorf("map state %q: %w", ch, err)
	}
	r, ok := v.([]any)
	if !ok || len(r) < 3 {
		return engine.MapStatePage{}, fmt.Errorf("map state %q: %w: %v", ch, errReply, v)
	}
	top, _ := r[0].(int64)
	epoch, _ := r[1].(string)
	more, _ := r[2].(int64)
	page := engine.MapStatePage{Position: engine.StreamPosition{Offset: uint64(top), Epoch: epoch}}
	rest := r[3:]
	if more == 1 {
		if len(rest)%2 != 1 {
			return engine.MapStatePage{}, fmt.Errorf("map state %q: %w: odd reply", ch, errReply)
		}
		page.Cursor, _ = rest[len(rest)-1].(string)
		rest = rest[:len(rest)-1]
	}
	for i := 0; i+1 < len(rest); i += 2 {
		key, _ := rest[i].(string)
		val, _ := rest[i+1].(string)
		off, body, ok := strings.Cut(val, ":")
		o, err := strconv.ParseUint(off, 10, 64)
		if !ok || err != nil {
			return engine.MapStatePage{}, fmt.Errorf("map state %q: key %q: %w: bad value", ch, key, errReply)
		}
		p, err := wire.DecodePublication([]byte(body))
		if err != nil {
			return engine.MapStatePage{}, fmt.Errorf("map state %q: key %q: %w", ch, key, err)
		}
		p.Offset, p.Key = o, key
		page.Entries = append(page.Entries, p)
	}
	return page, nil
}

// MapStats counts ch's keys that have not expired.
func (e *Engine) MapStats(ctx context.Context, ch string) (engine.MapStats, error) {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return engine.MapStats{}, fmt.Errorf("map stats %q: %w", ch, err)
	}
	keys := e.keys.mapKeys(ch)
	n, err := mapStatsScript.Run(ctx, e.client, []string{keys[3], keys[4]}).Int64()
	if err != nil {
		return engine.MapStats{}, fmt.Errorf("map stats %q: %w", ch, err)
	}
	return engine.MapStats{NumKeys: int(n)}, nil
}

// MapClear drops ch's state, stream and position.
func (e *Engine) MapClear(ctx context.Context, ch string) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("map clear %q: %w", ch, err)
	}
	// One slot: one DEL is atomic even in Redis Cluster.
	if err := e.client.Del(ctx, e.keys.mapKeys(ch)...).Err(); err != nil {
		return fmt.Errorf("map clear %q: %w", ch, err)
	}
	return nil
}

// mapExpiryBatch bounds the channels one index read returns and the keys
// one mapExpireScript call removes; a janitor tick goes on until nothing due is
// left, so that keys expiring together are removed together.
const mapExpiryBatch = 500

// mapExpiryRounds bounds the batches of channels, and of one channel's
// keys, in one tick (800,000 keys).
const mapExpiryRounds = 200

// runMapJanitor removes expired keys as changes, on every node; a key
// removed by another node first is skipped by the script (only if due).
func (e *Engine) runMapJanitor() {
	t := time.NewTicker(e.opts.MapExpiryInterval)
	defer t.Stop()
	for {
		select {
		case <-e.bgCtx.Done():
			return
		case <-t.C:
		}
		if err := e.expireMapKeys(e.bgCtx); err != nil && e.bgCtx.Err() == nil {
			e.log.Warn("expire map keys", "error", err)
		}
	}
}

func (e *Engine) expireMapKeys(ctx context.Context) error {
	now, err := e.client.Time(ctx).Result()
	if err != nil {
		return err
	}
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	for range mapExpiryRounds {
		chans, err := e.client.ZRangeByScore(ctx, e.keys.mapExpiring(), &goredis.ZRangeBy{Min: "-inf", Max: ms, Count: mapExpiryBatch}).Result()
		if err != nil {
			return err
		}
		for _, ch := range chans {
			if err := e.expireChannelKeys(ctx, ch, ms); err != nil {
				return err
			}
		}
		if len(chans) < mapExpiryBatch {
			return nil
		}
	}
	return nil
}

// expireChannelKeys removes ch's keys due at ms (Redis clock, Unix
// milliseconds), mapExpiryBatch*mapExpiryPipelines a round trip, and
// updates ch's entry in the expiry index. One round trip per key left
// 30,000 keys expiring together seconds late.
func (e *Engine) expireChannelKeys(ctx context.Context, ch, ms string) error {
	keys := e.keys.mapKeys(ch)
	vals, err := e.client.HMGet(ctx, keys[5], "s", "t", "m").Result()
	if err != nil {
		return err
	}
	opts := engine.MapPublishOptions{StreamSize: 100, StreamTTL: time.Minute}
	if n, err := strconv.Atoi(fmt.Sprint(vals[0])); err == nil && n > 0 {
		opts.StreamSize = n
	}
	if n, err := strconv.ParseInt(fmt.Sprint(vals[1]), 10, 64); err == nil && n > 0 {
		opts.StreamTTL = time.Duration(n) * time.Millisecond
	}
	if n, err := strconv.ParseInt(fmt.Sprint(vals[2]), 10, 64); err == nil && n > 0 {
		opts.MetaTTL = time.Duration(n) * time.Millisecond
	}
	// Bounded, in case a key the script leaves in the index stays due:
	// what is left waits for the next tick.
	for range mapExpiryRounds {
		due, err := e.client.ZRangeByScore(ctx, keys[4], &goredis.ZRangeBy{Min: "-inf", Max: ms, Count: mapExpiryBatch * mapExpiryPipelines}).Result()
		if err != nil {
			return err
		}
		if err := e.removeDueKeys(ctx, ch, keys, due, opts); err != nil {
			return fmt.Errorf("channel %q: %w", ch, err)
		}
		if len(due) < mapExpiryBatch*mapExpiryPipelines {
			break
		}
	}
	// The channel's next expiry, or out of the index when it has none
	// left (a race with a change that adds one is settled by that
	// change's own index update, which follows its script).
	first, err := e.client.ZRangeWithScores(ctx, keys[4], 0, 0).Result()
	if err != nil {
		return err
	}
	if len(first) == 0 {
		err = e.client.ZRem(ctx, e.keys.mapExpiring(), ch).Err()
	} else {
		err = e.client.ZAdd(ctx, e.keys.mapExpiring(), goredis.Z{Score: first[0].Score, Member: ch}).Err()
	}
	if err != nil && !errors.Is(err, goredis.Nil) {
		return err
	}
	return nil
}

// mapExpiryPipelines is how many scripts of mapExpiryBatch removals one
// pipeline of a channel's janitor sends (4,000 keys a round trip).
const mapExpiryPipelines = 8

// removeDueKeys removes due, keys of ch whose TTL passed, each as a change
// (the script skips one touched or removed meanwhile), in scripts of
// mapExpiryBatch keys, all in one pipeline. A script call per key, 500 to
// a pipeline, left 30,000 keys expiring together 1.7 s late: each call
// also read the channel's earliest expiry and rewrote its options, and
// each body was encoded with its arguments apart.
func (e *Engine) removeDueKeys(ctx context.Context, ch string, keys, due []string, opts engine.MapPublishOptions) error {
	if len(due) == 0 {
		return nil
	}
	head := []any{"", opts.StreamSize, millis(opts.StreamTTL), millis(e.metaTTL(opts.MetaTTL)), newEpoch(), e.keys.pubsubChannel(ch)}
	var args [][]any
	for len(due) > 0 {
		part := due[:min(len(due), mapExpiryBatch)]
		due = due[len(part):]
		a := append(make([]any, 0, len(head)+2*len(part)), head...)
		for _, key := range part {
			pub := &engine.Publication{Key: key, Removed: true, Time: time.Now().UnixMilli()}
			a = append(a, key, wire.AppendPublication(nil, pub))
		}
		args = append(args, a)
	}
	for attempt := 0; ; attempt++ {
		cmds := make([]*goredis.Cmd, len(args))
		_, _ = e.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for i, a := range args {
				cmds[i] = mapExpireScript.EvalSha(ctx, p, keys, a...)
			}
			return nil
		})
		err := firstErr(cmds)
		if err != nil && attempt == 0 && goredis.HasErrorPrefix(err, "NOSCRIPT") {
			// Again, whole: the script skips keys already removed.
			if err := mapExpireScript.Load(ctx, e.client).Err(); err != nil {
				return fmt.Errorf("load map expire script: %w", err)
			}
			continue
		}
		return err
	}
}

// firstErr is the first error of cmds, or nil.
func firstErr(cmds []*goredis.Cmd) error {
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			return err
		}
	}
	return nil
}
