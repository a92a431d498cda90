package redis

import "strconv"

// keyspace names everything the engine keeps in Redis. A channel's keys
// put the channel in a hash tag ("{...}"), so that in Redis Cluster a
// channel's stream, meta and presence live in one slot and one script can
// touch them together. A brace inside a channel name only shortens the
// tag, identically for all of the channel's keys.
//
//	<prefix>:h:{<ch>}   stream of publications, entry id "<offset>-0", field "d"
//	<prefix>:m:{<ch>}   hash: "e" epoch, "s" top offset
//	<prefix>:pc:{<ch>}  hash: client id -> encoded ClientInfo
//	<prefix>:pe:{<ch>}  sorted set: client id scored by expiry (ms, Redis clock)
//	<prefix>:st:{<bucket>}  hash: key -> 8-byte expiry (Unix ms, 0 none) + value (engine.Store)
//	<prefix>:control    never written: in Redis Cluster, the slot of the
//	                    master that relays control messages (publishRaw)
//
// Pub/sub channels are a separate namespace:
//
//	<prefix>:c:<ch>     publications and join/leave events of <ch>
//	<prefix>:control    control messages to every node, subscribed by every node
//	<prefix>:node:<id>  control messages to node <id> alone, subscribed by it
type keyspace struct {
	prefix  string
	chanPfx string // "<prefix>:c:"
	control string
}

func newKeyspace(prefix string) keyspace {
	return keyspace{
		prefix:  prefix,
		chanPfx: prefix + ":c:",
		control: prefix + ":control",
	}
}

// nodeControl is the pub/sub channel of the control messages addressed
// to node id alone.
func (k keyspace) nodeControl(id string) string { return k.prefix + ":node:" + id }

func (k keyspace) tagged(kind, ch string) string { return k.prefix + ":" + kind + ":{" + ch + "}" }

func (k keyspace) stream(ch string) string          { return k.tagged("h", ch) }
func (k keyspace) meta(ch string) string            { return k.tagged("m", ch) }
func (k keyspace) presenceClients(ch string) string { return k.tagged("pc", ch) }
func (k keyspace) presenceExpiry(ch string) string  { return k.tagged("pe", ch) }
func (k keyspace) pubsubChannel(ch string) string   { return k.chanPfx + ch }
func (k keyspace) store(bucket string) string       { return k.tagged("st", bucket) }
func (k keyspace) historyKeys(ch string) []string   { return []string{k.stream(ch), k.meta(ch)} }
func (k keyspace) presenceKeys(ch string) []string {
	return []string{k.presenceClients(ch), k.presenceExpiry(ch)}
}

// pin is a key that is never written: its slot chooses the master that
// subscribing connection i of a node sits on in Redis Cluster.
func (k keyspace) pin(i int) string { return k.prefix + ":pin:" + strconv.Itoa(i) }

func (k keyspace) isChannel(redisChannel string) bool {
	return len(redisChannel) >= len(k.chanPfx) && redisChannel[:len(k.chanPfx)] == k.chanPfx
}

// channelOf returns the Herald channel of a pub/sub channel name that
// isChannel accepted; the result shares the argument's memory.
func (k keyspace) channelOf(redisChannel string) string { return redisChannel[len(k.chanPfx):] }
