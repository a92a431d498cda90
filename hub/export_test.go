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

// LengthenWriteHolds makes the holds of replies and pushes queued while
// commands run (command_exec.go) a minute each, for tests that assert
// what commands queue together shares a frame: on a loaded machine a
// command can outlast the 10 ms hold, which then ends as designed.
func (h *Hub) LengthenWriteHolds() {
	h.holds.each.Store(int64(time.Minute))
	h.holds.total.Store(int64(time.Minute))
}
