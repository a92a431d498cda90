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

// conn is one session's stream as a hub.Transport and hub.WriteStarter: a
// write to a QUIC stream waits when the client's flow-control window is
// full, so the hub's shared writers hand each frame to the session's own
// writer goroutine (run) instead of writing it themselves; a frame that
// comes while the previous one is still being written is written by the
// hub on a goroutine of the client's own (FinishFrame), after it.
type conn struct {
	sess    *wt.Session
	str     *wt.Stream
	proto   protocol.Type
	timeout time.Duration
	wait    time.Duration
	log     *slog.Logger
	remote  string
	// wmu is held by whoever writes to the stream; mu guards the state
	// below and is never held during a write.
	wmu  sync.Mutex
	mu   sync.Mutex
	idle sync.Cond // on mu: busy was cleared, or the connection closed
	// closed: Close has run, or a write failed; no more writes.
	closed      bool
	closeCalled bool
	// writeFailed is told when a handed-over write fails, so that the hub
	// closes the connection as it does when WriteFrame fails (3009).
	writeFailed func(error)
	// busy: out holds output handed to run that it has not finished
	// writing; out belongs to run until busy clears.
	busy   bool
	out    []byte
	code   uint32
	reason string
	kick   chan struct{} // buffered 1: output waits for run
	// closing is closed when Close has run, after the disconnect push.
	closing chan struct{}
	stop    chan struct{} // closed by finish: run returns
	stopped chan struct{} // closed when run has returned
}

func newConn(sess *wt.Session, str *wt.Stream, proto protocol.Type, cfg Config, remote string) *conn {
	c := &conn{
		sess: sess, str: str, proto: proto, timeout: cfg.WriteTimeout, wait: cfg.CloseWait,
		log: cfg.Logger, remote: remote, writeFailed: func(error) {},
		kick: make(chan struct{}, 1), closing: make(chan struct{}),
		stop: make(chan struct{}), stopped: make(chan struct{}),
	}
	c.idle.L = &c.mu
	go c.run()
	return c
}

// Protocol is the session's encoding for its whole life.
func (c *conn) Protocol() protocol.Type { return c.proto }

// StartFrame hands frame, in the stream's framing, to the writer goroutine
// and reports true; or, while that goroutine still writes the previous
// frame, false without taking frame: FinishFrame then writes it once the
// previous one is out.
func (c *conn) StartFrame(frame []byte) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false, ErrClosed
	}
	if c.busy {
		return false, nil
	}
	c.out, c.busy = c.encode(c.out[:0], frame), true
	select {
	case c.kick <- struct{}{}:
	default:
	}
	return true, nil
}

// FinishFrame writes frame after the frame StartFrame handed over.
func (c *conn) FinishFrame(frame []byte) error { return c.WriteFrame(frame) }

// run writes the output StartFrame hands over until finish stops it.
func (c *conn) run() {
	defer close(c.stopped)
	for {
		select {
		case <-c.kick:
			c.writeHandedOver()
		case <-c.stop:
			return
		}
	}
}

// writeHandedOver writes the output StartFrame left in out.
func (c *conn) writeHandedOver() {
	c.wmu.Lock()
	c.mu.Lock()
	out, write := c.out, c.busy && !c.closed
	c.mu.Unlock()
	var err error
	if write {
		err = c.writeLocked(out)
	}
	c.wmu.Unlock()
	c.mu.Lock()
	c.busy = false
	c.keepLocked(out)
	if err != nil {
		c.closed = true
	}
	c.idle.Broadcast()
	failed := c.writeFailed
	c.mu.Unlock()
	if err != nil {
		failed(fmt.Errorf("webtransport write to %s: %w", c.remote, err))
	}
}

// keepLocked keeps out as the output buffer unless a burst grew it.
func (c *conn) keepLocked(out []byte) {
	if cap(out) <= maxKeptBuf {
		c.out = out[:0]
	} else {
		c.out = nil
	}
}

// lockWrite waits until no handed-over output is pending and takes wmu
// and then mu, unless the connection is closed (false, nothing held).
func (c *conn) lockWrite() bool {
	c.mu.Lock()
	for c.busy && !c.closed {
		c.idle.Wait()
	}
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return false
	}
	c.wmu.Lock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.wmu.Unlock()
		return false
	}
	return true
}

// WriteFrame writes the messages of a hub frame, within the write timeout,
// after any output handed over before. A failed write closes the
// connection for writes.
func (c *conn) WriteFrame(frame []byte) error {
	if !c.lockWrite() {
		return ErrClosed
	}
	out := c.encode(c.out[:0], frame)
	c.out = nil // out is this write's until it is done
	c.mu.Unlock()
	err := c.writeLocked(out)
	c.wmu.Unlock()
	c.mu.Lock()
	c.keepLocked(out)
	if err != nil {
		c.closed = true
		c.idle.Broadcast()
	}
	c.mu.Unlock()
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

// writeLocked writes out under the write deadline; wmu is held.
func (c *conn) writeLocked(out []byte) error {
	if err := c.str.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	_, err := c.str.Write(out)
	return err
}

// onWriteFailed sets what a failed handed-over write tells.
func (c *conn) onWriteFailed(f func(error)) {
	c.mu.Lock()
	c.writeFailed = f
	c.mu.Unlock()
}

// Close writes a disconnect push with code and reason, after any output
// handed over before, and ends the server's side of the stream; the
// handler closes the session once the client has (or after the close
// wait). Idempotent, and safe concurrently with the writes (it waits for
// one in progress, at most the write timeout).
func (c *conn) Close(code uint32, reason string) {
	pushed := c.lockWrite()
	if !pushed {
		c.mu.Lock()
	}
	if c.closeCalled {
		c.mu.Unlock()
		if pushed {
			c.wmu.Unlock()
		}
		return
	}
	c.closeCalled, c.closed, c.code, c.reason, c.out = true, true, code, reason, nil
	c.idle.Broadcast()
	c.mu.Unlock()
	if pushed {
		msg, err := protocol.AppendPush(c.proto, nil, &protocol.Push{Disconnect: &protocol.Disconnect{Code: code, Reason: reason}})
		if err == nil {
			err = c.writeLocked(c.encode(nil, protocol.AppendMessage(c.proto, nil, msg)))
		}
		c.wmu.Unlock()
		if err != nil {
			c.log.Debug("webtransport disconnect push not sent", "remote", c.remote, "code", code, "error", err)
		}
	}
	_ = c.str.Close()
	// The read loop ends when the client closes, or at the latest after
	// the close wait.
	_ = c.str.SetReadDeadline(time.Now().Add(c.wait))
	close(c.closing)
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// finish closes the session once the connection is over, and stops the
// writer goroutine: at once when the client went away first; otherwise
// with the code Close was given, after the client closed the session on
// the disconnect push or the close wait passed. hubClosing says the hub is
// closing the connection (the read loop stopped for a frame it refused),
// so that its Close is awaited.
func (c *conn) finish(hubClosing bool) {
	defer func() {
		close(c.stop)
		<-c.stopped
	}()
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
	if !isClosed(c.closing) {
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
