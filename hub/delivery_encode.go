package hub

import (
	"unicode/utf8"

	"github.com/centrifugal/fdelta"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub/internal/tagsfilter"
	"github.com/heraldhq/herald/protocol"
)

// Encoding, in one place: what the hub sends a client goes through here.
// A publication or join/leave event the engine delivers is encoded once
// per protocol, and once more per protocol for delta subscribers (in full
// as a JSON string, and as a delta), whatever the number of subscribers:
// every subscriber's queue shares the bytes (delivery). The pushes and
// replies of one client are encoded with the client's protocol
// (encodePush, encodeReply).

// encodePush encodes a push to c.
func (c *Client) encodePush(p *protocol.Push) ([]byte, error) {
	return protocol.AppendPush(c.proto, nil, p)
}

// encodeReply encodes a reply to c.
func (c *Client) encodeReply(r *protocol.Reply) ([]byte, error) {
	return protocol.AppendReply(c.proto, nil, r)
}

// encodeReplySized encodes r, whose size is about size bytes (0: not
// known), in t (queueReplySized).
func encodeReplySized(t protocol.Type, r *protocol.Reply, size int) ([]byte, error) {
	var dst []byte
	if size > 0 && t == protocol.TypeJSON {
		dst = make([]byte, 0, size)
	}
	return protocol.AppendReply(t, dst, r)
}

// delivery is one publication or join/leave event on its way to local
// subscribers, with its encodings made on first use.
type delivery struct {
	push       *protocol.Push
	jsonMsg    []byte
	protoMsg   []byte
	jsonDone   bool
	protoDone  bool
	jsonFailed bool
	delta      *deltaStep      // nil unless the channel has delta subscribers
	dx         deltaEncodings  // deltaMsgs
	matches    tagsfilter.Memo // results of shared tags filters
	compacted  *delivery       // the push by channel id (compaction.go)
	source     *delivery       // for a compaction twin, the delivery it copies
}

// encoded returns the push encoded for t, or nil when it cannot be (a
// binary payload for a JSON client). It is called only from the goroutine
// that runs the fan-out.
func (d *delivery) encoded(t protocol.Type) []byte {
	if t == protocol.TypeProtobuf {
		if !d.protoDone {
			d.protoMsg, _ = protocol.AppendPush(t, nil, d.push)
			d.protoDone = true
		}
		return d.protoMsg
	}
	if !d.jsonDone {
		d.jsonDone = true
		if pub := d.push.Pub; pub != nil && !jsonDeliverable(pub.Data, pub.Key) {
			d.jsonFailed = true
			return nil
		}
		d.jsonMsg, _ = protocol.AppendPush(t, nil, d.push)
	}
	return d.jsonMsg
}

// deltaEncodings are a delivery's encodings for delta subscribers, made on
// first use by the goroutine that runs the fan-out.
type deltaEncodings struct {
	jsonFull     []byte // data as a JSON string
	jsonFullDone bool
	patch        []byte // nil when no delta is worth sending
	patchDone    bool
	diff         [2][]byte // by deltaIndex(t)
	diffDone     [2]bool
}

func deltaIndex(t protocol.Type) int {
	if t == protocol.TypeProtobuf {
		return 1
	}
	return 0
}

// deltaMsgs returns the publication for a delta subscriber using t: in
// full, and as a delta against d.delta.base (nil when there is no base or
// the delta is not smaller). full is nil when the data cannot be sent to t.
func (d *delivery) deltaMsgs(t protocol.Type) (full, diff []byte) {
	x := &d.dx
	if t == protocol.TypeProtobuf {
		full = d.encoded(t) // the same bytes as without delta
	} else if full = d.encoded(t); full != nil {
		if !x.jsonFullDone {
			x.jsonFullDone = true
			x.jsonFull = d.encodeData(t, protocol.AppendJSONString(nil, d.push.Pub.Data), false)
		}
		full = x.jsonFull
	}
	if full == nil || d.delta == nil || !d.delta.base.valid() {
		return full, nil
	}
	patch := d.patch()
	if patch == nil {
		return full, nil
	}
	i := deltaIndex(t)
	if !x.diffDone[i] {
		x.diffDone[i] = true
		if t == protocol.TypeProtobuf {
			x.diff[i] = d.encodeData(t, patch, true)
		} else if utf8.Valid(patch) {
			// A JSON string carries text: a delta cutting a multi-byte
			// character in two cannot travel, and the payload goes in full.
			x.diff[i] = d.encodeData(t, protocol.AppendJSONString(nil, patch), true)
		}
	}
	return full, x.diff[i]
}

// patch is the delta of the publication's data against d.delta's base,
// made once per delivery (its compaction twin asks its source); nil when
// it is not smaller.
func (d *delivery) patch() []byte {
	if d.source != nil {
		return d.source.patch()
	}
	x := &d.dx
	if !x.patchDone {
		x.patchDone = true
		data, base := d.push.Pub.Data, d.delta.baseData
		if len(data) <= maxDeltaPayload && len(base) <= maxDeltaPayload {
			if p := fdelta.Create(base, data); len(p) < len(data) {
				x.patch = p
			}
		}
	}
	return x.patch
}

// encodeData encodes the delivery's push with data in place of the
// publication's data.
func (d *delivery) encodeData(t protocol.Type, data []byte, delta bool) []byte {
	msg, _ := protocol.AppendPush(t, nil, &protocol.Push{Id: d.push.Id, Channel: d.push.Channel, Pub: withData(d.push.Pub, data, delta)})
	return msg
}

// withData is p carrying data instead of its own (protoPublication's
// fields: the hub sets no others).
func withData(p *protocol.Publication, data []byte, delta bool) *protocol.Publication {
	return &protocol.Publication{Data: data, Info: p.Info, Offset: p.Offset, Tags: p.Tags, Key: p.Key, Removed: p.Removed, Delta: delta}
}

func protoClientInfo(i *engine.ClientInfo) *protocol.ClientInfo {
	if i == nil {
		return nil
	}
	return &protocol.ClientInfo{User: i.User, Client: i.Client, ConnInfo: i.ConnInfo, ChanInfo: i.ChanInfo}
}

func protoPublication(p *engine.Publication) *protocol.Publication {
	return &protocol.Publication{Data: p.Data, Info: protoClientInfo(p.Info), Offset: p.Offset, Tags: p.Tags, Key: p.Key, Removed: p.Removed}
}

// recoveredDeltas rewrites recovered publications for a delta
// subscription as the reference does: the first in full, each next one as
// a delta against the previous when smaller; over JSON every data is a
// JSON string. It returns the reference of the last one's data, and the
// data.
func recoveredDeltas(t protocol.Type, pubs []*protocol.Publication, epoch string) (deltaRef, []byte) {
	var prev []byte
	for i, p := range pubs {
		data := p.Data
		out, delta := data, false
		if i > 0 && len(data) <= maxDeltaPayload && len(prev) <= maxDeltaPayload {
			if patch := fdelta.Create(prev, data); len(patch) < len(data) && (t == protocol.TypeProtobuf || utf8.Valid(patch)) {
				out, delta = patch, true
			}
		}
		if t == protocol.TypeJSON {
			out = protocol.AppendJSONString(nil, out)
		}
		pubs[i] = withData(p, out, delta)
		prev = data
	}
	if len(pubs) == 0 {
		return deltaRef{}, nil
	}
	return deltaRef{epoch: epoch, offset: pubs[len(pubs)-1].Offset}, prev
}

// jsonDeliverable reports whether a publication's data can go to a JSON
// client: JSON, or nothing at all for a map change (a removal, or a key
// whose value is its Info alone).
func jsonDeliverable(data []byte, key string) bool {
	return (key != "" && len(data) == 0) || protocol.ValidJSONPayload(data)
}
