package redis

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
)

var (
	_ engine.ChannelStates           = (*Engine)(nil)
	_ engine.ChannelStateDropCounter = (*Engine)(nil)
)

// Channel state events (engine.ChannelStates). Channels are spread over
// channelStatePartitions partitions (Centrifugo PRO's num_partitions, by
// default 128 there); all of a partition's keys share one hash tag, so
// each change is one Lua script on one slot, atomic on Redis Cluster too,
// and a channel's events queue in its partition's stream, in the order the
// scripts made them. A partition holds:
//
//	csh  hash: channel -> "occupied,last_ms,delay_ms"
//	cso  hash: channel NUL node -> 1 (which nodes have subscribers)
//	csk  hash: channel -> how many nodes
//	csv  zset: channel -> when its pending vacated event is due (ms)
//	cse  stream: the undelivered events (c channel, t type, m time_ms)
//	csn  zset: node -> when its lease runs out (ms)
//	csc  set per node: the node's channels in the partition
//	csg  zset: vacated channel -> its last event time, forgotten a second later
//	csl  string: the deliverer's lock
//	csf  string: the last id of the batch being delivered (see deliverPartition)
//	csd  string: how many of that batch's events the bound dropped meanwhile
//
// Times come from the Redis server's clock (luaNow), so nodes' clocks need
// not agree. The number of partitions must not change while channels are
// occupied: their records would be looked for in another partition.
const channelStatePartitions = 16

// channelStateBound is the bound of each partition's stream
// (engine.ChannelStateOptions.MaxQueue over the partitions, the last one
// this node was given, for the events its sweeps make) and what it
// dropped in this node's scripts.
type channelStateBound struct {
	maxLen  atomic.Int64
	dropped atomic.Uint64
}

// set takes the bound of opts and returns the partitions' share of it.
func (b *channelStateBound) set(opts engine.ChannelStateOptions) int64 {
	n := int64(0)
	if opts.MaxQueue > 0 {
		n = int64((opts.MaxQueue + channelStatePartitions - 1) / channelStatePartitions)
	}
	b.maxLen.Store(n)
	return n
}

// ChannelStateEventsDropped implements engine.ChannelStateDropCounter.
func (e *Engine) ChannelStateEventsDropped() uint64 { return e.csBound.dropped.Load() }

// channelStateKeys are the keys of one partition; csc is node's set.
func (k keyspace) channelStateKeys(p int, node string) []string {
	tag := k.prefix + ":cs:{" + strconv.Itoa(p) + "}:"
	return []string{tag + "h", tag + "o", tag + "k", tag + "v", tag + "e", tag + "n", tag + "c:" + node, tag + "g", tag + "f", tag + "d"}
}

func (k keyspace) channelStateLock(p int) string {
	return k.prefix + ":cs:{" + strconv.Itoa(p) + "}:l"
}

// channelStatePartition is the partition of a channel.
func (e *Engine) channelStatePartition(ch string) int {
	h := uint32(2166136261) // FNV-1a: stable across processes, unlike maphash
	for i := 0; i < len(ch); i++ {
		h ^= uint32(ch[i])
		h *= 16777619
	}
	return int(h % channelStatePartitions)
}

// luaChannelState is what every channel state script shares: the clock,
// the state codec, emit and left (as 0020_channel_state.sql's functions
// on PostgreSQL). A script sets maxlen, the stream's bound (0: none),
// before it emits; dropped counts the oldest events the bound removed,
// but for those of a batch being delivered (up to the id in KEYS[9]):
// they reach the backend if that delivery succeeds, so they wait in
// KEYS[10], and the deliverer counts them only if it fails.
const luaChannelState = luaNow + `
local maxlen, dropped = 0, 0
local function getst(ch)
  local raw = redis.call('hget', KEYS[1], ch)
  if not raw then return 0, 0, 0 end
  local o, l, d = string.match(raw, '^(%d),(%d+),(-?%d+)$')
  return tonumber(o), tonumber(l), tonumber(d)
end
local function putst(ch, o, l, d)
  redis.call('hset', KEYS[1], ch, string.format('%d,%d,%d', o, l, d))
end
local function emit(ch, typ, last)
  local ms = math.max(now, last + 1)
  if maxlen > 0 then
    local over = redis.call('xlen', KEYS[5]) + 1 - maxlen
    if over > 0 then
      local flight = redis.call('get', KEYS[9])
      local held = 0
      if flight then held = #redis.call('xrange', KEYS[5], '-', flight, 'COUNT', over) end
      dropped = dropped + over - held
      if held > 0 then redis.call('incrby', KEYS[10], held) end
    end
    redis.call('xadd', KEYS[5], 'MAXLEN', maxlen, '*', 'c', ch, 't', typ, 'm', string.format('%d', ms))
  else
    redis.call('xadd', KEYS[5], '*', 'c', ch, 't', typ, 'm', string.format('%d', ms))
  end
  return ms
end
local function vacate(ch, l, d)
  local ms = emit(ch, 'vacated', l)
  putst(ch, 0, ms, d)
  redis.call('zadd', KEYS[8], ms, ch)
end
local function left(ch)
  local o, l, d = getst(ch)
  if o == 0 or redis.call('zscore', KEYS[4], ch) or tonumber(redis.call('hget', KEYS[3], ch) or '0') > 0 then
    return
  end
  if d <= 0 then
    vacate(ch, l, d)
  else
    redis.call('zadd', KEYS[4], now + d, ch)
  end
end
local function drop(ch, node)
  if redis.call('hdel', KEYS[2], ch .. '\0' .. node) == 1 then
    if redis.call('hincrby', KEYS[3], ch, -1) <= 0 then
      redis.call('hdel', KEYS[3], ch)
    end
    redis.call('srem', KEYS[7], ch)
  end
end
`

// channelStateSet records a node's occupancy of a channel; it returns
// how many events the bound dropped.
//
//	ARGV: channel, node, occupied (1/0), delay ms, lease ms, bound
var channelStateSet = goredis.NewScript(luaChannelState + `
local ch, node, delay = ARGV[1], ARGV[2], tonumber(ARGV[4])
maxlen = tonumber(ARGV[6])
redis.call('zadd', KEYS[6], 'NX', now + tonumber(ARGV[5]), node)
if ARGV[3] == '0' then
  drop(ch, node)
  local o, l, d = getst(ch)
  if o == 1 and d ~= delay then putst(ch, o, l, delay) end
  left(ch)
  return dropped
end
if redis.call('hsetnx', KEYS[2], ch .. '\0' .. node, 1) == 1 then
  redis.call('hincrby', KEYS[3], ch, 1)
  redis.call('sadd', KEYS[7], ch)
end
local o, l = getst(ch)
if o == 0 then
  putst(ch, 1, emit(ch, 'occupied', l), delay)
  redis.call('zrem', KEYS[8], ch)
else
  redis.call('zrem', KEYS[4], ch)
  putst(ch, 1, l, delay)
end
return dropped
`)

// channelStateRelease drops a node's records of the partition; it
// returns how many events the bound dropped.
//
//	ARGV: node, bound
var channelStateRelease = goredis.NewScript(luaChannelState + `
local node = ARGV[1]
maxlen = tonumber(ARGV[2])
for _, ch in ipairs(redis.call('smembers', KEYS[7])) do
  drop(ch, node)
  left(ch)
end
redis.call('del', KEYS[7])
redis.call('zrem', KEYS[6], node)
return dropped
`)

// channelStateKeep renews a node's lease; 1 when it had lapsed.
//
//	ARGV: node, lease ms
var channelStateKeep = goredis.NewScript(luaNow + `
local exp = tonumber(redis.call('zscore', KEYS[6], ARGV[1]) or '0')
redis.call('zadd', KEYS[6], now + tonumber(ARGV[2]), ARGV[1])
if exp > now then return 0 end
return 1
`)

// channelStateSweep makes the due vacated events, forgets vacated
// channels whose last event is past, and returns how many events the
// bound dropped followed by the nodes whose lease lapsed (released by the
// caller, with their sets as keys).
//
//	ARGV: limit, bound
var channelStateSweep = goredis.NewScript(luaChannelState + `
local limit = tonumber(ARGV[1])
maxlen = tonumber(ARGV[2])
for _, ch in ipairs(redis.call('zrangebyscore', KEYS[4], '-inf', now, 'LIMIT', 0, limit)) do
  redis.call('zrem', KEYS[4], ch)
  local o, l, d = getst(ch)
  if o == 1 and tonumber(redis.call('hget', KEYS[3], ch) or '0') == 0 then
    vacate(ch, l, d)
  end
end
for _, ch in ipairs(redis.call('zrangebyscore', KEYS[8], '-inf', now - 1000, 'LIMIT', 0, limit)) do
  redis.call('zrem', KEYS[8], ch)
  if getst(ch) == 0 then redis.call('hdel', KEYS[1], ch) end
end
local out = redis.call('zrangebyscore', KEYS[6], '-inf', '(' .. now, 'LIMIT', 0, limit)
table.insert(out, 1, dropped)
return out
`)

// channelStateFlight reads a batch of up to ARGV[1] events of the stream
// KEYS[3] and marks it as being delivered, in one step, so that the bound
// drops none of it unseen: KEYS[1] holds its last id for ARGV[2] ms (the
// lock's time), and KEYS[2], the count of its events the bound drops
// meanwhile, starts at zero. It returns what KEYS[2] held (drops of a
// deliverer that stopped before it could tell whether its delivery
// failed, lost as far as anyone knows), then id, channel, type and time
// of each event.
var channelStateFlight = goredis.NewScript(`
local left = tonumber(redis.call('get', KEYS[2]) or '0')
redis.call('del', KEYS[2])
local out = {left}
local msgs = redis.call('xrange', KEYS[3], '-', '+', 'COUNT', ARGV[1])
if #msgs == 0 then return out end
redis.call('set', KEYS[1], msgs[#msgs][1], 'PX', ARGV[2])
for _, m in ipairs(msgs) do
  local f = {}
  for i = 1, #m[2], 2 do f[m[2][i]] = m[2][i + 1] end
  table.insert(out, m[1])
  table.insert(out, f.c or '')
  table.insert(out, f.t or '')
  table.insert(out, f.m or '')
end
return out`)

// channelStateLanded ends a delivery: it removes the marks of
// channelStateFlight and returns how many of the batch's events the
// bound dropped meanwhile.
var channelStateLanded = goredis.NewScript(`
local n = tonumber(redis.call('get', KEYS[2]) or '0')
redis.call('del', KEYS[1], KEYS[2])
return n`)

// unlockIfMine deletes KEYS[1] if it still holds ARGV[1].
var unlockIfMine = goredis.NewScript(`
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0`)

// SetChannelOccupancy implements engine.ChannelStates.
func (e *Engine) SetChannelOccupancy(ctx context.Context, channel string, occupied bool, opts engine.ChannelStateOptions) error {
	if err := e.life.Usable(ctx); err != nil {
		return err
	}
	on := "0"
	if occupied {
		on = "1"
	}
	keys := e.keys.channelStateKeys(e.channelStatePartition(channel), e.opts.NodeID)
	bound := e.csBound.set(opts)
	dropped, err := channelStateSet.Run(ctx, e.client, keys, channel, e.opts.NodeID, on, opts.VacatedDelay.Milliseconds(), opts.NodeTTL.Milliseconds(), bound).Uint64()
	if err != nil {
		return fmt.Errorf("redis engine: record occupancy of %q (occupied %v): %w", channel, occupied, err)
	}
	e.csBound.dropped.Add(dropped)
	return nil
}

// KeepChannelOccupancy implements engine.ChannelStates: the lease is kept
// in every partition.
func (e *Engine) KeepChannelOccupancy(ctx context.Context, ttl time.Duration) (bool, error) {
	if err := e.life.Usable(ctx); err != nil {
		return false, err
	}
	lost := false
	for p := range channelStatePartitions {
		n, err := channelStateKeep.Run(ctx, e.client, e.keys.channelStateKeys(p, e.opts.NodeID), e.opts.NodeID, ttl.Milliseconds()).Int()
		if err != nil {
			return false, fmt.Errorf("redis engine: renew channel state lease: %w", err)
		}
		lost = lost || n == 1
	}
	return lost, nil
}

// ReleaseChannelOccupancy implements engine.ChannelStates.
func (e *Engine) ReleaseChannelOccupancy(ctx context.Context) error {
	if err := e.life.Usable(ctx); err != nil {
		return err
	}
	for p := range channelStatePartitions {
		if err := e.releaseChannelStates(ctx, p, e.opts.NodeID); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) releaseChannelStates(ctx context.Context, p int, node string) error {
	dropped, err := channelStateRelease.Run(ctx, e.client, e.keys.channelStateKeys(p, node), node, e.csBound.maxLen.Load()).Uint64()
	if err != nil {
		return fmt.Errorf("redis engine: release the channels of node %s: %w", node, err)
	}
	e.csBound.dropped.Add(dropped)
	return nil
}

// DeliverChannelStates implements engine.ChannelStates. Each partition is
// swept, then delivered under a lock of its own, held through fn (as
// long as ctx allows), so that one node at a time hands a partition's
// events out, in stream order.
func (e *Engine) DeliverChannelStates(ctx context.Context, limit int, fn func(context.Context, []engine.ChannelStateEvent) error) (int, error) {
	if err := e.life.Usable(ctx); err != nil {
		return 0, err
	}
	lockTTL := 30 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		lockTTL = time.Until(dl) + time.Second
	}
	token := rand.Text()
	n := 0
	for p := range channelStatePartitions {
		if n >= limit {
			break
		}
		keys := e.keys.channelStateKeys(p, "")
		res, err := channelStateSweep.Run(ctx, e.client, keys, limit, e.csBound.maxLen.Load()).Slice()
		if err != nil {
			return n, fmt.Errorf("redis engine: channel state sweep: %w", err)
		}
		lapsed, err := e.sweptChannelStates(res)
		if err != nil {
			return n, err
		}
		for _, node := range lapsed {
			if err := e.releaseChannelStates(ctx, p, node); err != nil {
				return n, err
			}
		}
		got, err := e.deliverPartition(ctx, p, keys, token, lockTTL, limit-n, fn)
		n += got
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// sweptChannelStates counts the drops of a sweep's answer and returns
// its lapsed nodes.
func (e *Engine) sweptChannelStates(res []any) ([]string, error) {
	if len(res) == 0 {
		return nil, fmt.Errorf("redis engine: channel state sweep: empty answer")
	}
	dropped, ok := res[0].(int64)
	if !ok {
		return nil, fmt.Errorf("redis engine: channel state sweep: dropped count %T", res[0])
	}
	e.csBound.dropped.Add(uint64(dropped))
	nodes := make([]string, 0, len(res)-1)
	for _, r := range res[1:] {
		node, ok := r.(string)
		if !ok {
			return nil, fmt.Errorf("redis engine: channel state sweep: node %T", r)
		}
		nodes = append(nodes, node)
	}
	return nodes, nil
}

// deliverPartition hands up to limit events of partition p (whose keys
// are keys) to fn.
//
// An event of the batch that the bound drops while fn runs (an emit on
// any node, the stream at its bound) is not lost if fn succeeds. The
// batch's last id marks it as in flight, so such a drop is set aside
// instead of counted (luaChannelState), and counted here if fn fails.
func (e *Engine) deliverPartition(ctx context.Context, p int, keys []string, token string, lockTTL time.Duration, limit int, fn func(context.Context, []engine.ChannelStateEvent) error) (int, error) {
	stream, flight := keys[4], keys[8:10]
	lock := e.keys.channelStateLock(p)
	mine, err := e.client.SetNX(ctx, lock, token, lockTTL).Result()
	if err != nil {
		return 0, fmt.Errorf("redis engine: channel state delivery lock: %w", err)
	}
	if !mine {
		return 0, nil // another node is delivering this partition
	}
	defer func() {
		// A cancelled delivery must still let the others go.
		uctx, cancel := endingCtx(ctx)
		defer cancel()
		_ = unlockIfMine.Run(uctx, e.client, []string{lock}, token).Err()
	}()
	res, err := channelStateFlight.Run(ctx, e.client, []string{flight[0], flight[1], stream}, limit, lockTTL.Milliseconds()).Slice()
	if err != nil {
		return 0, fmt.Errorf("redis engine: read channel state events: %w", err)
	}
	left, ids, evs, err := flightBatch(res)
	if err != nil {
		return 0, err
	}
	e.csBound.dropped.Add(left)
	if len(evs) == 0 {
		return 0, nil
	}
	fnErr := fn(ctx, evs)
	// A cancelled delivery must still say what it lost.
	lctx, cancel := endingCtx(ctx)
	dropped, err := channelStateLanded.Run(lctx, e.client, flight).Uint64()
	cancel()
	if err != nil {
		return 0, fmt.Errorf("redis engine: end channel state delivery: %w", err)
	}
	if fnErr != nil {
		e.csBound.dropped.Add(dropped)
		return 0, fmt.Errorf("redis engine: deliver channel state events: %w", fnErr)
	}
	if err := e.client.XDel(ctx, stream, ids...).Err(); err != nil {
		return 0, fmt.Errorf("redis engine: remove delivered channel state events: %w", err)
	}
	return len(evs), nil
}

// endingCtx is for the calls that end a delivery (its marks, its lock):
// they must run when ctx is cancelled too, within a bound of their own.
func endingCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

// flightBatch parses channelStateFlight's answer.
func flightBatch(res []any) (left uint64, ids []string, evs []engine.ChannelStateEvent, err error) {
	if len(res) == 0 || (len(res)-1)%4 != 0 {
		return 0, nil, nil, fmt.Errorf("redis engine: read channel state events: answer of %d values", len(res))
	}
	n, ok := res[0].(int64)
	if !ok || n < 0 {
		return 0, nil, nil, fmt.Errorf("redis engine: read channel state events: dropped count %v", res[0])
	}
	for i := 1; i < len(res); i += 4 {
		var f [4]string
		for j := range f {
			if f[j], ok = res[i+j].(string); !ok {
				return 0, nil, nil, fmt.Errorf("redis engine: read channel state events: value %T", res[i+j])
			}
		}
		t, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return 0, nil, nil, fmt.Errorf("redis engine: channel state event %s: time %q: %w", f[0], f[3], err)
		}
		ids = append(ids, f[0])
		evs = append(evs, engine.ChannelStateEvent{Channel: f[1], Type: f[2], TimeMs: t})
	}
	return uint64(n), ids, evs, nil
}
