package redis

import (
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// The Lua scripts make each multi-key change atomic. They keep to the keys
// of one channel (one hash tag), so they also run on Redis Cluster. Times
// that several nodes compare (presence and node expiry) come from the Redis
// server's clock, so node clocks need not agree. Lua numbers are doubles:
// offsets are exact up to 2^53.

// luaNow is the Redis server time in milliseconds.
const luaNow = `
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// luaEnsureMeta reads the stream's epoch, creating the meta with the
// caller's candidate epoch when there is none. A new epoch means a new
// stream: leftover entries of an older one are dropped so that offsets
// can start again from 1. It then keeps the meta for at least ARGV[metaTTL]
// ms; a shorter TTL on a later call never cuts short an earlier promise.
const luaEnsureMeta = `
local epoch = redis.call('hget', KEYS[2], 'e')
if not epoch then
  epoch = ARGV[EPOCH]
  redis.call('hset', KEYS[2], 'e', epoch)
  redis.call('del', KEYS[1])
end
local metaTTL = tonumber(ARGV[METATTL])
if redis.call('pttl', KEYS[2]) < metaTTL then
  redis.call('pexpire', KEYS[2], metaTTL)
end
`

// publishScript appends a publication to a channel's stream and publishes
// it, in one step, so that subscribers see publications in offset order.
// With an empty pub/sub channel it only appends (see
// Engine.publishReplicated).
//
//	KEYS: stream, meta
//	ARGV: body, size, ttl ms, meta ttl ms, epoch candidate, pub/sub channel
//	returns {offset, epoch}
var publishScript = goredis.NewScript(luaAppend + `
return {offset, epoch}
`)

// luaAppend is the body publishScript and idemPublishHistoryScript share:
// it leaves the new publication's offset, id and epoch in locals.
var luaAppend = replaceAll(luaEnsureMeta, "EPOCH", "5", "METATTL", "4") + luaAppendBody

// luaAppendBody is luaAppend after the meta is ensured (epoch is set).
const luaAppendBody = `
local offset = redis.call('hincrby', KEYS[2], 's', 1)
local id = string.format('%d', offset)
redis.call('xadd', KEYS[1], 'MAXLEN', ARGV[2], id .. '-0', 'd', ARGV[1])
redis.call('pexpire', KEYS[1], ARGV[3])
if ARGV[6] ~= '' then
  redis.call('publish', ARGV[6], 'h' .. id .. ':' .. epoch .. ':' .. ARGV[1])
end
`

// relayScript publishes from the master that owns KEYS[1]'s slot (see
// Engine.publishRaw); it touches no key.
//
//	KEYS: a key of the slot
//	ARGV: pub/sub channel, message
var relayScript = goredis.NewScript(`return redis.call('publish', ARGV[1], ARGV[2])`)

// historyScript reads a stream and its position, creating the position
// when the channel has none (see engine.Broker.History).
//
//	KEYS: stream, meta
//	ARGV: epoch candidate, meta ttl ms, low id, high id, count (0: none, -1: all), reverse ('1')
//	returns {top offset, epoch, entries}
var historyScript = goredis.NewScript(replaceAll(luaEnsureMeta, "EPOCH", "1", "METATTL", "2") + `
local top = redis.call('hget', KEYS[2], 's') or '0'
local count = tonumber(ARGV[5])
if count == 0 then
  return {top, epoch, {}}
end
local cmd, a, b = 'xrange', ARGV[3], ARGV[4]
if ARGV[6] == '1' then
  cmd, a, b = 'xrevrange', ARGV[4], ARGV[3]
end
if count > 0 then
  return {top, epoch, redis.call(cmd, KEYS[1], a, b, 'COUNT', count)}
end
return {top, epoch, redis.call(cmd, KEYS[1], a, b)}
`)

// rangeScript reads part of a stream with its position for gap repair
// and replay. Unlike historyScript it never creates a position.
//
//	KEYS: stream, meta
//	ARGV: low id, high id, count
//	returns {top offset, epoch ("" when there is no stream), entries}
var rangeScript = goredis.NewScript(`
local epoch = redis.call('hget', KEYS[2], 'e')
if not epoch then
  return {'0', '', {}}
end
local top = redis.call('hget', KEYS[2], 's') or '0'
return {top, epoch, redis.call('xrange', KEYS[1], ARGV[1], ARGV[2], 'COUNT', ARGV[3])}
`)

// presenceAddScript adds or refreshes a client. The keys live as long as
// their longest-lived entry, so a channel whose nodes all died goes away.
//
//	KEYS: clients hash, expiry zset
//	ARGV: client id, encoded info, ttl ms
var presenceAddScript = goredis.NewScript(luaNow + `
local ttl = tonumber(ARGV[3])
redis.call('zadd', KEYS[2], now + ttl, ARGV[1])
redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
if redis.call('pttl', KEYS[2]) < ttl then
  redis.call('pexpire', KEYS[2], ttl)
  redis.call('pexpire', KEYS[1], ttl)
end
return 1
`)

// presenceRemoveScript removes a client.
//
//	KEYS: clients hash, expiry zset
//	ARGV: client id
var presenceRemoveScript = goredis.NewScript(`
redis.call('hdel', KEYS[1], ARGV[1])
redis.call('zrem', KEYS[2], ARGV[1])
return 1
`)

// presenceReadScript drops expired clients and returns the rest: the
// whole hash, or with ARGV[1] = '1' the encoded infos only.
//
//	KEYS: clients hash, expiry zset
var presenceReadScript = goredis.NewScript(luaNow + `
while true do
  local expired = redis.call('zrangebyscore', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)
  if #expired == 0 then
    break
  end
  redis.call('zrem', KEYS[2], unpack(expired))
  redis.call('hdel', KEYS[1], unpack(expired))
end
if ARGV[1] == '1' then
  return redis.call('hvals', KEYS[1])
end
return redis.call('hgetall', KEYS[1])
`)

// replaceAll substitutes argument positions into a script fragment.
func replaceAll(s string, oldNew ...string) string {
	return strings.NewReplacer(oldNew...).Replace(s)
}
