package grpcapi

import (
	"sync"
	"time"
)

// sendWatch closes a connection whose client stopped taking responses.
//
// grpc-go queues a unary call's response whole in the connection's
// writer and ends the call; the bytes then wait for the client's
// flow-control window. A client that never reads keeps every response it
// asked for in the server's memory for as long as the connection lives
// (pings are still answered, so keepalive does not end it). No grpc-go
// event tells when a queued response has left, so the watch compares what
// was queued (the stats handler's OutPayload) with what was written to
// the socket (watchConn): from the first response queued while the
// connection had nothing pending, it waits for the socket to take as
// much; each timeout without any write progress while some is still
// pending closes the connection. A client reading slowly but steadily is
// not cut.
//
// What the socket takes also counts frame headers, pings and TLS records,
// so the watch may stop early by that much: it bounds how long responses
// are held, not by exact bytes.
type sendWatch struct {
	conn    *watchConn
	timeout time.Duration

	mu          sync.Mutex
	timer       *time.Timer // nil: nothing pending, not armed
	queued      int64       // payload bytes queued since the watch was armed
	start, last int64       // bytes written when armed, and at the last check
	ended       bool
}

// queuedPayload notes n payload bytes queued for the client.
func (w *sendWatch) queuedPayload(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	if w.timer == nil {
		w.queued = 0
		w.start = w.conn.written.Load()
		w.last = w.start
		w.timer = time.AfterFunc(w.timeout, w.check)
	}
	w.queued += int64(n)
}

// check runs a timeout after arming or after the last progress.
func (w *sendWatch) check() {
	w.mu.Lock()
	written := w.conn.written.Load()
	switch {
	case w.ended:
	case written-w.start >= w.queued:
		w.timer = nil // all went out
	case written > w.last:
		w.last = written
		w.timer.Reset(w.timeout)
	default:
		w.ended, w.timer = true, nil
		w.mu.Unlock()
		// Closing the socket ends the transport and frees its queue.
		_ = w.conn.Close()
		return
	}
	w.mu.Unlock()
}

// stop ends the watch when the connection ended.
func (w *sendWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ended = true
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}
