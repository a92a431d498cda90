package hub

import (
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// Delta compression on map subscriptions is per key, as the reference
// does it (centrifuge v0.40.1 client_map.go and hub.go; centrifuge-js 5.8
// keeps one base per key): a change of a key goes as a Fossil delta
// against the previous value of the same key, which a subscriber in sync
// holds, from the state, the stream or an earlier live change. Over JSON
// every value of such a subscription, in the state and stream pages too,
// is a JSON string (the client keeps the exact bytes as the next base).
//
// The node keeps, for each map channel with delta subscribers here, the
// latest value of each key it knows, with the range of the stream it
// vouches for: the key's last change is at offset, and no change of the
// key lies between it and through. A value read from the state as of
// position P vouches up to P; a value seen live up to its own offset. The
// node also knows from which offset on it saw every change of the channel
// (since). A change of the key at offset o has a usable base when the
// node saw everything after through, i.e. through+1 >= since: then the
// base is the key's value just before o. A subscriber holds that value
// when it went live before o and lost nothing since (a positioned map
// subscription is resubscribed on a gap; a queue drop breaks it, below).

// maxDeltaSeeds bounds the map channels whose values a node keeps from
// state and stream pages read before their subscriber went live (a flow a
// client may abandon): the oldest are forgotten first. maxDeltaSeedKeys
// bounds the keys kept for each: past it a key's first live change goes
// in full.
const (
	maxDeltaSeeds    = 256
	maxDeltaSeedKeys = 10_000
)

// mapDeltaIntact is the deltaHave of a map subscription that lost no
// publication since it went live: per-key bases are checked by the node
// (deltaChannel.advanceKey), the subscription only has to be unbroken. A
// queue drop resets deltaHave, and every later change goes in full.
var mapDeltaIntact = deltaRef{seq: ^uint64(0)}

// mapDeltaKey is the value of a key a node knows.
type mapDeltaKey struct {
	offset  uint64 // of the change that set the value
	through uint64 // no change of the key from offset up to this one
	data    []byte // shared with the engine's publication, read-only
}

// mapKeys is the per-key part of a map channel's deltaChannel.
type mapKeys struct {
	epoch string
	seen  uint64 // the last offset seen live
	since uint64 // every change from this offset to seen was seen (0: none yet)
	keys  map[string]mapDeltaKey
}

// advanceKey records a map change and returns its step: the base is the
// key's value before it when the node can vouch for it, otherwise none
// (the change goes in full).
func (mk *mapKeys) advanceKey(pub *engine.Publication, sp engine.StreamPosition) *deltaStep {
	ref := deltaRef{epoch: sp.Epoch, offset: sp.Offset}
	if sp.Offset == 0 {
		return &deltaStep{} // no position: nothing to vouch with
	}
	if sp.Epoch != mk.epoch {
		mk.epoch, mk.since, mk.seen, mk.keys = sp.Epoch, 0, 0, nil
	}
	switch {
	case mk.seen != 0 && sp.Offset <= mk.seen:
		return &deltaStep{} // seen already (a redelivery): nothing to learn
	case mk.seen == 0 || sp.Offset != mk.seen+1:
		mk.since = sp.Offset // the first one, or after a gap
	}
	mk.seen = sp.Offset
	step := &deltaStep{ref: ref}
	if prev, ok := mk.keys[pub.Key]; ok && prev.through+1 >= mk.since {
		step.base, step.baseData = deltaRef{epoch: sp.Epoch, offset: prev.offset}, prev.data
	}
	if pub.Removed {
		delete(mk.keys, pub.Key)
		return step
	}
	if mk.keys == nil {
		mk.keys = make(map[string]mapDeltaKey)
	}
	mk.keys[pub.Key] = mapDeltaKey{offset: sp.Offset, through: sp.Offset, data: pub.Data}
	return step
}

// seed records values a subscriber read in epoch: state entries as of
// through (from == through), or the changes of a contiguous stream range
// (from, through], in order. Every change of the range being among pubs,
// a key the node vouched for up to from is good up to through as well. A
// value the node knows from a later change stays.
func (mk *mapKeys) seed(epoch string, pubs []*engine.Publication, from, through uint64, limit int) {
	if epoch != mk.epoch {
		if len(mk.keys) > 0 || mk.seen != 0 {
			return // the node follows another epoch; its live changes decide
		}
		mk.epoch = epoch
	}
	if from < through {
		for k, v := range mk.keys {
			if v.through >= from && v.through < through {
				v.through = through
				mk.keys[k] = v
			}
		}
	}
	for _, p := range pubs {
		if p.Key == "" || p.Offset == 0 {
			continue
		}
		have, ok := mk.keys[p.Key]
		switch {
		case ok && have.offset > p.Offset:
			continue
		case p.Removed:
			delete(mk.keys, p.Key)
			continue
		case ok && have.offset == p.Offset:
			have.through = max(have.through, through)
			mk.keys[p.Key] = have
			continue
		}
		if !ok && limit > 0 && len(mk.keys) >= limit {
			continue // a key it does not hold: its first change goes in full
		}
		if mk.keys == nil {
			mk.keys = make(map[string]mapDeltaKey)
		}
		mk.keys[p.Key] = mapDeltaKey{offset: p.Offset, through: max(through, p.Offset), data: p.Data}
	}
}

// seedMap records what a delta map subscriber of ch read: its channel's
// entry when it has delta subscribers here, else a seed entry (bounded by
// maxDeltaSeeds) that swap takes over when the subscriber goes live.
func (dc *deltaChannels) seedMap(ch, epoch string, pubs []*engine.Publication, from, through uint64) {
	if len(pubs) == 0 && from >= through {
		return
	}
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if e := dc.m[ch]; e != nil {
		e.mapKeys().seed(epoch, pubs, from, through, 0)
		return
	}
	e := dc.seeds[ch]
	if e == nil {
		if len(dc.seeds) >= maxDeltaSeeds {
			dc.forgetOldestSeed()
		}
		if dc.seeds == nil {
			dc.seeds = make(map[string]*deltaChannel)
		}
		dc.seedSeq++
		e = &deltaChannel{seeded: dc.seedSeq}
		dc.seeds[ch] = e
	}
	e.mapKeys().seed(epoch, pubs, from, through, maxDeltaSeedKeys)
}

func (dc *deltaChannels) forgetOldestSeed() {
	var oldest string
	var at uint64
	for ch, e := range dc.seeds {
		if at == 0 || e.seeded < at {
			oldest, at = ch, e.seeded
		}
	}
	delete(dc.seeds, oldest)
}

func (e *deltaChannel) mapKeys() *mapKeys {
	if e.keys == nil {
		e.keys = &mapKeys{}
	}
	return e.keys
}

// mapDeltaWanted reports whether a map subscribe request will negotiate
// delta when it goes live (newSubscription decides it the same way): its
// state and stream pages are then written for a delta subscriber.
func (c *Client) mapDeltaWanted(r *rule, req *protocol.SubscribeRequest) bool {
	return req.Tf == nil && !c.hub.rowChecked(req.Channel) && r.negotiateDelta(req.Delta)
}

// mapDeltaPages writes a delta subscriber's state or stream page entries:
// over JSON their values become JSON strings; removals carry no data.
func (c *Client) mapDeltaPages(pubs []*protocol.Publication) {
	if c.proto != protocol.TypeJSON {
		return
	}
	for _, p := range pubs {
		if len(p.Data) > 0 {
			p.Data = protocol.AppendJSONString(nil, p.Data)
		}
	}
}

// mapRecovered writes the changes a delta map subscriber recovers when it
// goes live: each in full (a JSON string over JSON), as the client takes
// them for new bases; the node keeps them as the keys' values up to top.
func (c *Client) mapRecovered(s *subscription, pubs []*protocol.Publication, read []*engine.Publication, from uint64, top engine.StreamPosition) {
	c.mapDeltaPages(pubs)
	c.hub.deltas.seedMap(s.channel, top.Epoch, read, from, top.Offset)
}
