package hub

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/heraldhq/herald/protocol"
)

// Channel compaction. A subscriber whose subscribe request sets bit 1 of
// flag (centrifuge-go, centrifuge-js and centrifuge-python always do), in a
// namespace with allow_channel_compaction, gets a numeric channel id in
// its subscribe result (SubscribeResult.id, field 14); the publication,
// join and leave pushes of that subscription then carry the id (Push.id,
// field 1) and no channel name (Push.channel, field 2). Facts from
// centrifugal/protocol v0.23.1 client.proto (SubscribeRequest.flag,
// SubscribeResult.id, Push.id) and centrifugal/centrifuge v0.40.1
// (hub.go: one id per channel and node, from 1, shared by every compacted
// subscriber of the channel; the unsubscribe push keeps the channel name,
// which centrifuge-js routes by).
//
// An id belongs to a channel on this node while a compacted subscriber of
// the channel is registered, and is never given to another channel: ids
// are not reused in the node's lifetime, so a push that races an
// unsubscribe cannot reach a subscription it was not meant for. Because
// every compacted subscriber of a channel shares its id, a delivery has at
// most two encodings per protocol, with the name and with the id.

// flagChannelCompaction is SubscribeRequest.flag bit 1: the client routes
// pushes by a numeric channel id when the server gives one.
const flagChannelCompaction = 1

// wantsCompaction reports whether c's client-side subscription to a
// channel of r is to be compacted.
func (c *Client) wantsCompaction(r *rule, req *protocol.SubscribeRequest) bool {
	return r.AllowChannelCompaction && req.Flag&flagChannelCompaction != 0 && !c.noCompaction
}

// routesByID reports whether a client, by its encoding and the SDK name of
// its connect request, can route pushes by channel id when it asks to.
// centrifuge-js (name "js") over Protobuf cannot, up to 5.8.0 at least:
// its Protobuf build decodes the int64 ids with long.js into objects,
// which it then compares by identity (`sub._id === id`, after an `id > 0`
// that is false for an object), so it would drop every compacted
// publication, join and leave (tests/js/compaction.test.mjs, run without
// this check, saw none arrive). Its JSON build, centrifuge-go (JSON and
// Protobuf) and centrifuge-python route them. Such a client is answered
// without an id, as where the namespace does not allow it.
func routesByID(t protocol.Type, sdkName string) bool {
	return t != protocol.TypeProtobuf || sdkName != "js"
}

// compactShards spreads channels over independently locked maps, as the
// registry does, so that subscribing in one channel does not wait on
// another.
const compactShards = 64

// compactIDs gives channels their compaction ids, counting the
// subscriptions that hold each.
type compactIDs struct {
	seed   maphash.Seed
	last   atomic.Int64
	shards [compactShards]compactShard
}

type compactShard struct {
	mu  sync.Mutex
	ids map[string]*compactID
}

type compactID struct {
	id   int64
	refs int
}

func (t *compactIDs) init() {
	t.seed = maphash.MakeSeed()
	for i := range t.shards {
		t.shards[i].ids = make(map[string]*compactID)
	}
}

func (t *compactIDs) shard(ch string) *compactShard {
	return &t.shards[maphash.String(t.seed, ch)%compactShards]
}

// acquire returns ch's id, giving it one if it has none, and counts one
// more holder.
func (t *compactIDs) acquire(ch string) int64 {
	sh := t.shard(ch)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.ids[ch]
	if e == nil {
		// From 1: 0 is the field's absence on the wire, a push with
		// neither id nor channel.
		e = &compactID{id: t.last.Add(1)}
		sh.ids[ch] = e
	}
	e.refs++
	return e.id
}

// release counts one holder of ch's id less; the channel loses its id
// with its last holder.
func (t *compactIDs) release(ch string) {
	sh := t.shard(ch)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.ids[ch]; e != nil {
		if e.refs--; e.refs <= 0 {
			delete(sh.ids, ch)
		}
	}
}

// swapCompaction gives added (being registered) its channel's id when it
// asked for compaction, and releases the id of removed (unregistered),
// which held one. It runs before added is registered, so the fan-out sees
// the id it reads without the client's mutex.
func (h *Hub) swapCompaction(ch string, added, removed *subscription) {
	if added != nil && added.compact {
		added.compactID = h.compact.acquire(ch)
	}
	if removed != nil && removed.compactID != 0 {
		h.compact.release(ch)
	}
}

// pushFor returns the delivery whose encodings go to s: d itself, or for a
// compacted subscription d's twin carrying the channel id instead of the
// name. The twin is made once per delivery (every compacted subscriber of
// a channel has the same id) and keeps its encodings, so the fan-out
// encodes a publication at most twice per protocol. Called only from the
// goroutine that runs the fan-out, as encoded is.
func (d *delivery) pushFor(s *subscription) *delivery {
	if s.compactID == 0 {
		return d
	}
	if d.compacted == nil || d.compacted.push.Id != s.compactID {
		// A different id would be a channel that lost its id and got a
		// new one while this delivery ran: not shared, but still right.
		src := d.push
		p := &protocol.Push{Id: s.compactID, Pub: src.Pub, Join: src.Join, Leave: src.Leave}
		d.compacted = &delivery{push: p, delta: d.delta, source: d}
	}
	return d.compacted
}
