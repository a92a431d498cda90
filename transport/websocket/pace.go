package websocket

import "time"

// A client that takes nothing for a whole WriteTimeout has either stopped
// reading or is a reader whose process got no CPU for a while: the kernel's
// count of what it took (Delivered) stands still either way. The two differ
// only in what came before. With a node writing as fast as its clients
// take, a reader's socket is full whenever it pauses, so such a pause
// alone, at twice the node's capacity with the load tool sharing the
// node's two cores, closed 92 of 500 reading subscribers with 3009 in one
// run (docs/benchmarks.md, "Overload on a slower machine"); their pauses
// stayed under three seconds (none was closed with a 3 s timeout). A
// server that writes more slowly, or keeps megabytes in the kernel's
// socket buffers rather than in its own queues (Herald sets
// TCP_NOTSENT_LOWAT), sees the same pause as a write that merely waits.
//
// So a data frame to a client that has been reading fails only after
// readerStallWindows timeouts in a row in which it took less than
// minWriteProgress; a client that has not been reading (one that never
// read, or took less than that between marks) is cut after one, as
// before. Reading is something a client shows more than once: a client
// that never reads still has its kernel take what fits in its receive
// buffer (a few hundred kilobytes at most, once), so one span of progress
// proves nothing. A client counts as reading once it took at least
// minWriteProgress in two spans between marks (each span at least one
// WriteTimeout long), or, within one write, when two of its timeouts saw
// that much progress. What a span must carry is not a rate: a client
// cannot take more than the node sent it, and a span can hold a quiet
// minute. Nor does a span in which it took less undo it: a reader starved
// of CPU for a second takes nothing in that second, which is the pause
// this grace is for (with the last two spans required, one such span in
// the overload's 30 s closed 3 of 500 readers). One that stopped for good
// is cut all the same, readerStallWindows × WriteTimeout at most after its
// last byte; what waits for it meanwhile is bounded by the hub's queue
// limits, which give a detached write as long (WriteProgressTimeout).
const readerStallWindows = 3

// peerPace is what a connection's writes know of how its client takes
// bytes: the kernel's count at the last mark, and in how many spans between
// marks (up to two) the client took at least minWriteProgress. Marks are
// taken under the write lock: by a write that found the socket full, and by
// writes the socket took at once, once paceMarkBytes went out since the
// last mark and a WriteTimeout has passed (paced). So a client that gets a
// steady stream has fresh marks when its socket first fills, each asking
// the kernel once per WriteTimeout at most; a connection that receives
// little never asks. The zero mark is the connection's start.
type peerPace struct {
	at   int64  // when the mark was taken (UnixNano)
	took uint64 // Delivered at the mark
	sent uint32 // bytes written at once since the mark, up to paceMarkBytes
	kept uint8  // spans that carried minWriteProgress, up to 2
}

// paceMarkBytes is what writes must get out between marks taken on the
// fast path: four times minWriteProgress, so that a span marked there
// carried enough to judge the client by, and a quiet connection costs no
// clock reading per write.
const paceMarkBytes = 4 * minWriteProgress

// paced notes n bytes that a write got into the socket at once, and takes
// a mark when enough went out and a WriteTimeout has passed since the last
// one. Under the write lock.
func (c *Conn) paced(n int) {
	p := &c.pace
	if p.sent < paceMarkBytes {
		if p.sent += uint32(min(n, paceMarkBytes)); p.sent < paceMarkBytes {
			return
		}
	}
	now := time.Now().UnixNano()
	window := c.srv.cfg.WriteTimeout
	if now-p.at < int64(window) {
		return
	}
	took, ok := c.Delivered()
	if !ok {
		// Nothing to judge by: restart the count rather than read the
		// clock on every write.
		p.at, p.sent = now, 0
		return
	}
	p.reading(took, now, window)
}

// reading reports whether the client, which has taken took bytes by now,
// counts as a reader. It moves the mark when the last one is at least
// window old; a shorter span says too little.
func (p *peerPace) reading(took uint64, now int64, window time.Duration) bool {
	if span := now - p.at; span >= int64(window) && took >= p.took {
		if took-p.took >= minWriteProgress && p.kept < 2 {
			p.kept++
		}
		p.at, p.took, p.sent = now, took, 0
	}
	return p.kept >= 2
}
