package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/wire"
)

// Idempotent publishing. The key lives next to the channel's stream, in
// the channel's hash slot (<prefix>:i:{<ch>}:<key>), and one script checks
// it, publishes and stores the result, so that two nodes retrying the same
// publication at once deliver it once.

func (k keyspace) idempotency(ch, key string) string { return k.tagged("i", ch) + ":" + key }

// idemPublishHistoryScript is publishScript guarded by an idempotency key.
//
//	KEYS: stream, meta, idempotency key
//	ARGV: body, size, ttl ms, meta ttl ms, epoch candidate, pub/sub channel
//	      ('' publishes nothing: Publish sends it once replicated), key ttl ms
//	returns {offset, epoch, 1} for a new publication, {offset, epoch, 0}
//	for a repeat of one made within the key's ttl
var idemPublishHistoryScript = goredis.NewScript(`
local prev = redis.call('get', KEYS[3])
if prev then
  local sep = string.find(prev, ':', 1, true)
  return {tonumber(string.sub(prev, 1, sep - 1)), string.sub(prev, sep + 1), 0}
end
` + luaAppend + `
redis.call('set', KEYS[3], id .. ':' .. epoch, 'PX', ARGV[7])
return {offset, epoch, 1}
`)

// idemPublishScript publishes without history unless the key was seen.
//
//	KEYS: idempotency key
//	ARGV: message, pub/sub channel, key ttl ms
//	returns 1 when published, 0 for a repeat
var idemPublishScript = goredis.NewScript(`
if redis.call('set', KEYS[1], '0:', 'NX', 'PX', ARGV[3]) then
  redis.call('publish', ARGV[2], ARGV[1])
  return 1
end
return 0
`)

// publishIdempotentNoHistory is Publish without history with
// opts.IdempotencyKey set; with history, Publish runs
// idemPublishHistoryScript in place of publishScript.
func (e *Engine) publishIdempotentNoHistory(ctx context.Context, ch string, p *engine.Publication, opts engine.PublishOptions, buf *[]byte) error {
	*buf = wire.AppendPublication(append(*buf, msgPub), p)
	idem := e.keys.idempotency(ch, opts.IdempotencyKey)
	if err := idemPublishScript.Run(ctx, e.client, []string{idem}, *buf, e.keys.pubsubChannel(ch), millis(opts.IdempotentResultTTL)).Err(); err != nil {
		return fmt.Errorf("publish %q: %w", ch, err)
	}
	return nil
}
