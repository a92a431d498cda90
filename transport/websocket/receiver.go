package websocket

import "net/http"

// Receiver is the hub's side of a connection: it receives the connection's
// frames (hub.Client implements it).
//
// HandleFrame and HandleClose are never called concurrently with each other
// for one connection, and nothing is called after HandleClose.
type Receiver interface {
	// HandleFrame handles one complete data message (text or binary
	// payload, fragments joined). frame is valid only until HandleFrame
	// returns: the transport reuses its memory. On the epoll path it runs
	// on a shared worker, so it must not block for long; on the portable
	// path it runs on the connection's own goroutine. It returns false
	// when the receiver is closing and no more frames should be read; the
	// receiver then calls Conn.Close (it may have done so already).
	HandleFrame(frame []byte) bool
	// HandleClose is called exactly once when the connection is gone (peer
	// closed, read or write error, read timeout, or after Close). It runs on
	// the goroutine that reads the connection (a worker, the connection's
	// own goroutine, or ServeHTTP's), never inside Close or WriteFrame.
	HandleClose()
}

// AcceptFunc is called for every upgraded connection; it returns the Receiver
// that will receive its frames. It may call c.WriteFrame and c.Close. If it
// returns nil the connection is closed (1011 unless it was closed already)
// and HandleClose is not called.
type AcceptFunc func(c *Conn, r *http.Request) Receiver
