package hub

import "time"

// PinWriteInterval sets the node's write coalescing interval and keeps the
// load measurement from changing it for an hour, for tests of the rule a
// connection follows at a given interval.
func (h *Hub) PinWriteInterval(d time.Duration) {
	h.coalesce.interval.Store(int64(d))
	h.coalesce.winStart.Store(h.mono() + int64(time.Hour))
}

// QueuedBytes is the bytes waiting in the write queues of all the hub's
// clients.
func (h *Hub) QueuedBytes() int64 { return h.queuedTotal.Load() }

// WriteInterval is the node's current write coalescing interval (the
// metric client_write_coalesce_seconds reports it).
func (h *Hub) WriteInterval() time.Duration { return h.writeInterval() }
