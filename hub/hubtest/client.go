package hubtest

import (
	"context"
)

// poison overwrites a frame after HandleFrame returned: 0xff is neither
// JSON nor a sensible Protobuf prefix, so a hub that kept the frame fails
// loudly.
const poison = 0xff

// Send delivers frame to the receiver's HandleFrame, as a transport's reader
// does: on the caller's goroutine, one frame at a time per connection, in a
// buffer that is overwritten when HandleFrame returns. It returns ErrClosed
// without delivering when the connection is closed or HandleFrame returned
// false before. Replies may come after Send returns: read them with Next.
func (c *Conn) Send(frame []byte) error {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	c.mu.Lock()
	s, closed := c.receiver, c.closed
	c.mu.Unlock()
	if s == nil {
		panic("hubtest: Send before Attach")
	}
	if closed || c.stopped {
		return ErrClosed
	}
	c.scratch = append(c.scratch[:0], frame...)
	ok := s.HandleFrame(c.scratch)
	for i := range c.scratch {
		c.scratch[i] = poison
	}
	if !ok {
		c.stopped = true
	}
	return nil
}

// Next returns the next frame the hub wrote, waiting for it until ctx
// ends. Once the frames written before the connection closed are read, it
// returns a *CloseError with the hub's close code, or ErrClosed if the
// client dropped the connection.
func (c *Conn) Next(ctx context.Context) ([]byte, error) {
	for {
		c.mu.Lock()
		if len(c.frames) > 0 {
			f := c.frames[0]
			c.frames[0] = nil
			c.frames = c.frames[1:]
			c.mu.Unlock()
			return f, nil
		}
		if c.closed {
			e := c.closeErr
			c.mu.Unlock()
			if e == nil {
				return nil, ErrClosed
			}
			return nil, e
		}
		wait := c.notify
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Drop makes the client go away without a close handshake, as a peer
// that disconnects: later writes fail, and the receiver's HandleClose runs
// before Drop returns (once the HandleFrame in progress, if any, is done).
// If the hub closed the connection first, Drop waits for that HandleClose.
// It is idempotent.
func (c *Conn) Drop() {
	c.mu.Lock()
	c.markClosedLocked(nil)
	attached := c.receiver != nil
	c.mu.Unlock()
	if attached {
		c.finish()
	}
}
