package hub

import (
	"fmt"
	"slices"
	"sync"

	"github.com/heraldhq/herald/engine"
)

// Delta compression, as the reference server does it: a subscriber that
// asks for delta "fossil" in a namespace allowing it receives, when the
// namespace has delta_publish or the publication asks for delta, the first
// publication in full and each next one as a Fossil delta against the data
// of the previous publication it received (Publication.delta set), when
// the delta is smaller. Over the JSON protocol every publication data of
// such a subscription is a JSON string: the payload's text, or the delta's
// bytes.
//
// The node keeps the data of the latest publication of each channel with
// delta subscribers, so a delta is computed once per publication and
// encoded once per protocol. A subscriber gets it only if the previous
// publication it received is the one the delta is based on; otherwise
// (it just subscribed, a publication was skipped for it, or its queue
// dropped one) it gets the publication in full and the chain starts again.

// DeltaFossil is the only delta type: Fossil's delta format.
const DeltaFossil = "fossil"

// maxDeltaPayload bounds the payloads diffed: the cost of a Fossil delta
// grows with the base's size, and a larger publication goes in full.
const maxDeltaPayload = 1 << 20

// checkDeltaTypes adds a problem for each unknown type in types, found at
// the Go path field.
func checkDeltaTypes(types []string, field string, ps *optionProblems) {
	for i, t := range types {
		if t != DeltaFossil {
			ps.add(field, fmt.Sprintf("[%d]", i), fmt.Sprintf("unknown delta type %q: want %s", t, DeltaFossil))
		}
	}
}

// negotiateDelta reports whether a subscribe request asking for delta type
// requested gets it. As in the reference, a type the namespace does not
// allow is not an error: the subscription goes without delta.
func (r *rule) negotiateDelta(requested string) bool {
	return requested != "" && slices.Contains(r.AllowedDeltaTypes, requested)
}

// deltaRef names the data of one publication in a channel: its stream
// position when it has one (the same position always holds the same data),
// else a number this node gave it. The zero value names nothing.
type deltaRef struct {
	epoch  string
	offset uint64
	seq    uint64
}

func (r deltaRef) valid() bool { return r.offset > 0 || r.seq > 0 }

// deltaChannels holds, for each channel with delta subscribers on this
// node, the latest publication's data: the base of the next delta.
type deltaChannels struct {
	mu  sync.Mutex
	seq uint64 // numbers publications without a stream position
	m   map[string]*deltaChannel
	// seeds are map channels' values read by delta subscribers not live
	// yet (delivery_delta_map.go), taken over by swap.
	seeds   map[string]*deltaChannel
	seedSeq uint64
}

type deltaChannel struct {
	subs     int // registered delta subscriptions
	prev     deltaRef
	prevData []byte // shared with the engine's publication, read-only
	// keys, for a map channel, are the bases of its keys.
	keys   *mapKeys
	seeded uint64 // order of a seed entry, for forgetting the oldest
}

// swap counts added in and removed out of ch's delta subscriptions (either
// may be nil or without delta); the channel's base goes with its last one.
func (dc *deltaChannels) swap(ch string, added, removed *subscription) {
	n := 0
	if added != nil && added.delta {
		n++
	}
	if removed != nil && removed.delta {
		n--
	}
	if n == 0 {
		return
	}
	dc.mu.Lock()
	defer dc.mu.Unlock()
	e := dc.m[ch]
	if e == nil {
		if dc.m == nil {
			dc.m = make(map[string]*deltaChannel)
		}
		e = &deltaChannel{}
		if seeded := dc.seeds[ch]; seeded != nil {
			e = seeded
			delete(dc.seeds, ch)
		}
		dc.m[ch] = e
	}
	if e.subs += n; e.subs <= 0 {
		delete(dc.m, ch)
	}
}

// advance records pub as ch's latest publication and returns the step from
// the previous one, or nil when ch has no delta subscribers here.
func (dc *deltaChannels) advance(ch string, pub *engine.Publication, sp engine.StreamPosition) *deltaStep {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	e := dc.m[ch]
	if e == nil {
		return nil
	}
	if pub.Key != "" {
		return e.mapKeys().advanceKey(pub, sp) // a map channel: per key
	}
	ref := deltaRef{epoch: sp.Epoch, offset: sp.Offset}
	if sp.Offset == 0 {
		dc.seq++
		ref = deltaRef{seq: dc.seq}
	}
	step := &deltaStep{base: e.prev, baseData: e.prevData, ref: ref}
	e.prev, e.prevData = ref, pub.Data
	return step
}

// seed gives ch a base read from its stream (the last publication a
// recovery returned) when this node has seen none yet, e.g. because the
// channel had no delta subscriber here while it was published: the next
// live publication can then be a delta for the recovered subscriber. A
// stream position always names the same data, so a concurrent advance
// cannot make the base wrong, only newer.
func (dc *deltaChannels) seed(ch string, ref deltaRef, data []byte) {
	if !ref.valid() {
		return
	}
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if e := dc.m[ch]; e != nil && !e.prev.valid() {
		e.prev, e.prevData = ref, data
	}
}

// deltaStep is a publication seen from the previous one of its channel.
type deltaStep struct {
	base     deltaRef
	baseData []byte
	ref      deltaRef
}

// fullOnly makes the step go in full: it keeps its ref, so that the
// subscribers' chains stay whole, but has no base to diff against.
func (s *deltaStep) fullOnly() { s.base, s.baseData = deltaRef{}, nil }

// deltaPublish reports whether every publication of ch goes as a delta to
// the subscribers that negotiated delta: its namespace's delta_publish. A
// publication that does not is still sent as a delta when it carries
// engine.Publication.Delta (the server API's per-publish delta flag). As
// in Centrifugo 6.9.1, whose internal/api/api.go (Publish, lines 257-267;
// Broadcast, 366-376; MapPublish, 946-955) sets centrifuge's UseDelta to
// the request's delta or the namespace's delta_publish, and centrifuge
// v0.40.1's broker hands the hub no previous publication without
// UseDelta: otherwise a negotiated subscription gets each live
// publication in full; recovered publications go as deltas either way.
// The node that delivers decides, from the namespace every node is
// configured with alike and the flag that travels with the publication.
func (h *Hub) deltaPublish(ch string) bool {
	r, e := h.channels.resolve(ch)
	return e == nil && r.DeltaPublish
}
