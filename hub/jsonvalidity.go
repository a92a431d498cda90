package hub

import (
	"sync"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// Whether a publication read from a stream can go to a JSON client is
// decided once per publication, not once per client that reads it.
//
// History, recovery and map pages check every publication they return for
// a JSON client (canDecodeFrom): a Protobuf client may have published bytes
// that are not JSON. The check reads all of the data (UTF-8 and JSON
// syntax), and the same publications are read by many clients: in
// bench/attacks.sh noread (200 clients recovering and asking for 100
// publications of 60 KB), encoding/json.Valid was 88% of the node's CPU,
// and fresh clients waited for it. Live delivery checks once per fan-out
// already (delivery_encode.go). A publication is fixed by its channel,
// epoch and offset, so its answer is kept under them, for publications
// large enough that the check costs more than the lookup.
const (
	// jsonCheckCacheMin is the smallest data whose answer is kept: below
	// it the check is a few microseconds at most.
	jsonCheckCacheMin = 1024
	// jsonCheckCacheMax bounds the answers kept (about 100 bytes each);
	// past it they are all dropped and gathered again.
	jsonCheckCacheMax = 1 << 16
)

type jsonCheckKey struct {
	channel, epoch string
	offset         uint64
}

// jsonChecks keeps the answers. valid is the check itself
// (protocol.ValidJSONPayload; a test counts its calls).
type jsonChecks struct {
	valid func([]byte) bool
	mu    sync.RWMutex
	m     map[jsonCheckKey]bool
}

func newJSONChecks() *jsonChecks {
	return &jsonChecks{valid: protocol.ValidJSONPayload}
}

// deliverable is jsonDeliverable for p of ch's stream in epoch.
func (j *jsonChecks) deliverable(ch, epoch string, p *engine.Publication) bool {
	if (p.Key != "" && len(p.Data) == 0) || p.Offset == 0 || len(p.Data) < jsonCheckCacheMin {
		return jsonDeliverable(p.Data, p.Key)
	}
	k := jsonCheckKey{channel: ch, epoch: epoch, offset: p.Offset}
	j.mu.RLock()
	ok, known := j.m[k]
	j.mu.RUnlock()
	if known {
		return ok
	}
	ok = j.valid(p.Data)
	j.mu.Lock()
	if len(j.m) >= jsonCheckCacheMax || j.m == nil {
		j.m = make(map[jsonCheckKey]bool)
	}
	j.m[k] = ok
	j.mu.Unlock()
	return ok
}

// canDecodeFrom reports whether the client can receive p, a publication
// of ch's stream in epoch: any publication on Protobuf, JSON data on JSON.
func (c *Client) canDecodeFrom(ch, epoch string, p *engine.Publication) bool {
	return c.proto != protocol.TypeJSON || c.hub.jsonChecks.deliverable(ch, epoch, p)
}
