package websocket

import (
	"fmt"

	"github.com/gobwas/ws"
)

// pendingWrite is what is left of a data frame that StartFrame began and
// the socket did not take at once, for FinishFrame to write. It exists
// only while such a write waits, so an idle connection holds none.
type pendingWrite struct {
	wb      *writeBuf // the header, and a small payload copied behind it
	head    []byte    // what is left of wb.b
	payload []byte    // what is left of a payload written apart from its header
	d       *deflater // the compressor holding a compressed payload, if any
}

// StartFrame is WriteFrame without waiting (hub.WriteStarter): it writes
// what the socket takes at once and reports whether that was the whole
// frame. When it was not, the rest waits, and the connection's other
// writes (pong, close) wait behind it, until FinishFrame, which the caller
// must call next with the same frame, writes it: the hub's shared writers
// start writes, and only a goroutine of the client's own waits for its
// socket. On the portable path, which has no raw socket to write to
// without waiting, nothing is written and FinishFrame writes it all.
func (c *Conn) StartFrame(frame []byte) (bool, error) {
	h, payload, d, err := c.dataFrame(frame)
	if err != nil {
		return false, err
	}
	c.wmu.Lock()
	if c.state.Load()&stClosed != 0 {
		c.wmu.Unlock()
		c.putDeflater(d)
		return false, ErrClosed
	}
	h.Length = int64(len(payload))
	wb := c.srv.getWriteBuf()
	if err := ws.WriteHeaderBuffer(wb, h, wb.hdr[:]); err != nil {
		return false, c.failStart(wb, d, err)
	}
	if len(payload) <= maxCopiedPayload {
		wb.b, payload = append(wb.b, payload...), nil
	}
	head := wb.b
	n, err := c.tryWrite(head)
	head = head[n:]
	if err == nil && len(head) == 0 && len(payload) > 0 {
		n, err = c.tryWrite(payload)
		payload = payload[n:]
	}
	if err != nil {
		return false, c.failStart(wb, d, err)
	}
	if len(head) == 0 && len(payload) == 0 {
		c.paced(int(h.Length))
		c.srv.putWriteBuf(wb)
		c.wmu.Unlock()
		c.putDeflater(d)
		return true, nil
	}
	c.pw = &pendingWrite{wb: wb, head: head, payload: payload, d: d}
	return false, nil // wmu stays held: FinishFrame releases it
}

// FinishFrame writes the rest of the frame StartFrame began, within the
// write timeout as WriteFrame does, and releases the connection's writes.
func (c *Conn) FinishFrame([]byte) error {
	pw := c.pw
	if pw == nil {
		return nil // StartFrame wrote it all, or failed
	}
	c.pw = nil
	err := c.writeAll(pw.head, true)
	if err == nil && len(pw.payload) > 0 {
		err = c.writeAll(pw.payload, true)
	}
	c.srv.putWriteBuf(pw.wb)
	c.wmu.Unlock()
	c.putDeflater(pw.d)
	if err != nil {
		c.abort()
		return fmt.Errorf("websocket write to %s: %w", c.RemoteAddr(), err)
	}
	return nil
}

// failStart ends a StartFrame whose write failed: the stream is broken.
func (c *Conn) failStart(wb *writeBuf, d *deflater, err error) error {
	c.srv.putWriteBuf(wb)
	c.wmu.Unlock()
	c.putDeflater(d)
	c.abort()
	return fmt.Errorf("websocket write to %s: %w", c.RemoteAddr(), err)
}

func (c *Conn) putDeflater(d *deflater) {
	if d != nil {
		c.srv.flate.putDeflater(d)
	}
}
