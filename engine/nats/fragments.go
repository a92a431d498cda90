package nats

import "time"

// A message larger than the server's max_payload (1 MiB by default) is
// sent as numbered fragments on the channel's subject, one after another
// from one connection, so they arrive in order; interleaving with other
// publishers' messages is fine because fragments carry their origin and
// message id. A fragment lost to a disconnect loses its message, which is
// what at-most-once delivery allows, and the partial message is dropped
// after FragmentTimeout.

type fragKey struct {
	origin string
	id     uint64
}

type partial struct {
	next    uint64
	count   uint64
	buf     []byte
	started time.Time
}

// reassembler collects the fragments of one subscription. It is used only
// from that subscription's callback goroutine.
type reassembler struct {
	parts   map[fragKey]*partial
	timeout time.Duration
	maxSize int
}

// add takes one fragment and returns the whole message once its last
// fragment came; dropped reports a message given up on (out of order,
// too large).
func (r *reassembler) add(f fragment, now time.Time) (msg []byte, dropped bool) {
	for k, p := range r.parts {
		if now.Sub(p.started) > r.timeout {
			delete(r.parts, k)
			dropped = true
		}
	}
	if f.count == 1 {
		return f.chunk, dropped
	}
	key := fragKey{f.origin, f.id}
	p := r.parts[key]
	if p == nil {
		if f.index != 0 {
			return nil, true // its first fragment was lost
		}
		if r.parts == nil {
			r.parts = make(map[fragKey]*partial)
		}
		size := min(f.count*uint64(len(f.chunk)), uint64(r.maxSize))
		p = &partial{count: f.count, started: now, buf: make([]byte, 0, size)}
		r.parts[key] = p
	}
	if f.index != p.next || f.count != p.count || len(p.buf)+len(f.chunk) > r.maxSize {
		delete(r.parts, key)
		return nil, true
	}
	p.buf = append(p.buf, f.chunk...)
	p.next++
	if p.next < p.count {
		return nil, dropped
	}
	delete(r.parts, key)
	return p.buf, dropped
}
