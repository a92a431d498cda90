package webtransport

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	wt "github.com/quic-go/webtransport-go"

	"github.com/heraldhq/herald/protocol"
)

// ErrClosed is returned by WriteFrame once the connection is closing.
var ErrClosed = errors.New("webtransport: connection closed")

// maxKeptBuf is the largest output buffer a connection keeps between
// writes; a larger one, grown by a burst, is dropped.
const maxKeptBuf = 16 << 10

// conn is one session's stream as a hub.Transport.
type conn struct {
	sess    *wt.Session
	str     *wt.Stream
	proto   protocol.Type
	timeout time.Duration
	wait    time.Duration
	log     *slog.Logger
	remote  string

	// mu is held by whoever writes to the stream, and guards the state
	// below.
	mu     sync.Mutex
	closed bool // Close has run: no more writes
	buf    []byte
	code   uint32
	reason string
	// closing is closed when Close has run, after the disconnect push.
	closing chan struct{}
}

func newConn(sess *wt.Session, str *wt.Stream, proto protocol.Type, cfg Config, remote string) *conn {
	return &conn{
		sess: sess, str: str, proto: proto, timeout: cfg.WriteTimeout, wait: cfg.CloseWait,
		log: cfg.Logger, remote: remote, closing: make(chan struct{}),
	}
}

// Protocol is the session's encoding for its whole life.
func (c *conn) Protocol() protocol.Type { return c.proto }

// WriteFrame writes the messages of a hub frame, within the write timeout.
func (c *conn) WriteFrame(frame []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	out := c.encode(c.buf[:0], frame)
	err := c.writeLocked(out)
	if cap(out) <= maxKeptBuf {
		c.buf = out[:0]
	} else {
		c.buf = nil
	}
	if err != nil {
		return fmt.Errorf("webtransport write to %s: %w", c.remote, err)
	}
	return nil
}

// encode appends a hub frame in the stream's framing: the hub joins JSON
// messages with "\n" and one more ends the last (centrifuge-js splits the
// stream at each "\n"); Protobuf frames are varint-delimited already.
func (c *conn) encode(dst, frame []byte) []byte {
	dst = append(dst, frame...)
	if c.proto == protocol.TypeJSON {
		dst = append(dst, '\n')
	}
	return dst
}

func (c *conn) writeLocked(out []byte) error {
	if err := c.str.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	_, err := c.str.Write(out)
	return err
}

// Close writes a disconnect push with code and reason and ends the
// server's side of the stream; the handler closes the session once the
// client has (or after the close wait). Idempotent, and safe concurrently
// with WriteFrame (it waits for a write in progress, at most the write
// timeout).
func (c *conn) Close(code uint32, reason string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed, c.code, c.reason, c.buf = true, code, reason, nil
	msg, err := protocol.AppendPush(c.proto, nil, &protocol.Push{Disconnect: &protocol.Disconnect{Code: code, Reason: reason}})
	if err == nil {
		err = c.writeLocked(c.encode(nil, protocol.AppendMessage(c.proto, nil, msg)))
	}
	c.mu.Unlock()
	if err != nil {
		c.log.Debug("webtransport disconnect push not sent", "remote", c.remote, "code", code, "error", err)
	}
	_ = c.str.Close()
	// The read loop ends when the client closes, or at the latest after
	// the close wait.
	_ = c.str.SetReadDeadline(time.Now().Add(c.wait))
	close(c.closing)
}

// finish closes the session once the connection is over: at once when the
// client went away first; otherwise with the code Close was given, after
// the client closed the session on the disconnect push or the close wait
// passed. hubClosing says the hub is closing the connection (the read
// loop stopped for a frame it refused), so that its Close is awaited.
func (c *conn) finish(hubClosing bool) {
	t := time.NewTimer(c.wait)
	defer t.Stop()
	expired := false
	if hubClosing {
		select {
		case <-c.closing:
		case <-t.C:
			expired = true
		}
	}
	select {
	case <-c.closing:
	default:
		_ = c.sess.CloseWithError(0, "")
		return
	}
	if !expired {
		select {
		case <-c.sess.Context().Done():
		case <-t.C:
		}
	}
	c.mu.Lock()
	code, reason := c.code, c.reason
	c.mu.Unlock()
	_ = c.sess.CloseWithError(wt.SessionErrorCode(code), reason)
}
