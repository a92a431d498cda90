package hub

import (
	"unicode/utf8"

	"github.com/centrifugal/fdelta"

	"github.com/heraldhq/herald/protocol"
)

// Fossil deltas on shared poll keys, as centrifugal/centrifuge v0.40.1
// sends them (shared_poll.go buildPreparedPollData, client_keyed.go
// keyedWritePublication): a subscriber that asked for delta "fossil" where
// the namespace allows it gets delta: true in its subscribe result; over
// JSON every data it gets is then a JSON string, in track replies and
// pushes alike; the first data of each key goes in full, and each next
// change as a Fossil delta against the data of the version the client
// holds, when the delta is smaller and the client got that version's data
// from the node. Centrifugo diffs against the refresh result's prev_data
// (it keeps no data of its own by default); the node keeps every tracked
// key's data, and diffs against that: the very bytes its clients got,
// whatever the backend sends as prev_data.

// fullData is data as ps's client gets it in full: a JSON string for a
// JSON delta subscription.
func (ps *pollSub) fullData(data []byte) []byte {
	if ps.delta && ps.c.proto == protocol.TypeJSON {
		return protocol.AppendJSONString(nil, data)
	}
	return data
}

// publication is the push of p to ps, whose client holds tk: a delta when
// it may be one. The client's mutex is held.
func (ps *pollSub) publication(p *pollPush, tk *trackedKey) *protocol.Publication {
	if p.removed {
		return &protocol.Publication{Key: p.key, Removed: true}
	}
	pub := &protocol.Publication{Key: p.key, Version: p.version}
	if ps.delta && tk.ready && p.baseVersion > 0 && tk.version == p.baseVersion {
		switch patch := p.patch(); {
		case patch == nil:
		case ps.c.proto != protocol.TypeJSON:
			pub.Data, pub.Delta = patch, true
			return pub
		case utf8.Valid(patch):
			// A JSON string carries text: a delta cutting a multi-byte
			// character in two goes in full instead.
			pub.Data, pub.Delta = protocol.AppendJSONString(nil, patch), true
			return pub
		}
	}
	pub.Data = ps.fullData(p.data)
	return pub
}

// patch is the delta of p's data against its base, made on first use (one
// goroutine pushes a pollPush to all its trackers); nil when it would not
// be smaller.
func (p *pollPush) patch() []byte {
	if !p.patchDone {
		p.patchDone = true
		if len(p.data) <= maxDeltaPayload && len(p.base) <= maxDeltaPayload {
			if d := fdelta.Create(p.base, p.data); len(d) < len(p.data) {
				p.diff = d
			}
		}
	}
	return p.diff
}
