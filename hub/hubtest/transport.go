package hubtest

import (
	"bytes"
	"fmt"

	"github.com/heraldhq/herald/protocol"
)

// Protocol is the connection's encoding (hub.Transport).
func (c *Conn) Protocol() protocol.Type { return c.proto }

// WriteFrame keeps a copy of frame for Next (hub.Transport). It never
// blocks unless the connection is stalled, and fails once the connection
// is closed or with the error FailWrites set. Two calls at once panic: the
// hub must write from one goroutine at a time per connection.
func (c *Conn) WriteFrame(frame []byte) error {
	if !c.writing.CompareAndSwap(false, true) {
		panic("hubtest: WriteFrame called concurrently on one connection (hub.Transport allows one writer at a time)")
	}
	defer c.writing.Store(false)
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.stall != nil && !c.closed {
		stall := c.stall
		c.mu.Unlock()
		select {
		case <-stall:
		case <-c.gone:
		}
		c.mu.Lock()
	}
	if c.closed {
		return ErrClosed
	}
	if c.failWith != nil {
		return fmt.Errorf("hubtest: write: %w", c.failWith)
	}
	c.frames = append(c.frames, bytes.Clone(frame))
	c.signalLocked()
	return nil
}

// Close records the hub's close code and reason and closes the
// connection; HandleClose follows on another goroutine (hub.Transport). A
// stalled WriteFrame returns ErrClosed. Later calls, and calls after Drop,
// do nothing.
func (c *Conn) Close(code uint32, reason string) {
	c.mu.Lock()
	ok := c.markClosedLocked(&CloseError{Code: code, Reason: reason})
	attached := c.receiver != nil
	c.mu.Unlock()
	// Attach calls HandleClose for a connection closed before it.
	if ok && attached {
		go c.finish()
	}
}

// Stall makes WriteFrame block, as on a socket whose peer stopped reading,
// until Resume or until the connection closes.
func (c *Conn) Stall() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stall == nil {
		c.stall = make(chan struct{})
	}
}

// Resume lets stalled and later writes through.
func (c *Conn) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stall != nil {
		close(c.stall)
		c.stall = nil
	}
}

// FailWrites makes every later WriteFrame fail with err (nil: succeed
// again). Unlike a broken socket, the connection stays open: the hub is
// expected to close it, and Next then reports the close it asked for.
func (c *Conn) FailWrites(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failWith = err
}
