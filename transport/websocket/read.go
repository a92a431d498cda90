package websocket

import (
	"bytes"
	"errors"
	"io"
	"syscall"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsflate"
)

// readState is what a connection keeps while a message is only partly
// there. Idle connections have none.
type readState struct {
	pending []byte    // epoll: start of a frame whose end has not arrived
	msg     []byte    // fragments of a message so far
	msgOp   ws.OpCode // opcode of the first fragment
	frag    bool      // a fragmented message is open
	deflate bool      // the open fragmented message is compressed
	since   time.Time // when the unfinished message was first seen
}

// reader is the scratch space of one reading goroutine and the frame parser
// both read paths share: an epoll worker owns one for all the connections
// it serves; on the portable path each connection's goroutine owns one.
type reader struct {
	srv *Server
	buf []byte
	br  bytes.Reader
	hdr [ws.MaxHeaderSize]byte
}

// initialReadBuf is an epoll worker's buffer size, and the least a buffer
// grows to; a buffer grows up to one maximal frame.
const initialReadBuf = 16 << 10

// outcome of reading a connection.
type outcome uint8

const (
	keepReading outcome = iota // go on reading (epoll: re-arm the fd)
	stopReading                // the receiver asked to stop; read no more
	tearDown                   // the connection is closing: finish it
)

// frames handles the complete frames at the start of data and reports how
// many bytes they used and whether a data message completed.
func (r *reader) frames(c *Conn, data []byte) (out outcome, used int, completed bool) {
	cfg := &r.srv.cfg
	for {
		p := data[used:]
		hl := headerLen(p)
		if hl == 0 || len(p) < hl {
			return keepReading, used, completed
		}
		r.br.Reset(p[:hl])
		h, err := ws.ReadHeaderBuffer(&r.br, r.hdr[:])
		if err != nil {
			return r.fail(c, ws.StatusProtocolError, err), used, completed
		}
		compressed := false
		if c.deflate {
			// RSV1 marks a compressed message, on its first frame only;
			// with it cleared the header checks below apply unchanged.
			if h, compressed, err = wsflate.UnsetBit(h); err != nil {
				return r.fail(c, ws.StatusProtocolError, err), used, completed
			}
		}
		st := ws.StateServerSide
		if c.rd != nil && c.rd.frag {
			st = st.Set(ws.StateFragmented)
		}
		if err := ws.CheckHeader(h, st); err != nil {
			return r.fail(c, ws.StatusProtocolError, err), used, completed
		}
		total := h.Length
		if h.OpCode.IsData() && c.rd != nil && c.rd.frag {
			total += int64(len(c.rd.msg))
		}
		if total > cfg.MaxMessageSize {
			return r.fail(c, ws.StatusMessageTooBig, errTooBig), used, completed
		}
		if int64(len(p)-hl) < h.Length {
			return keepReading, used, completed
		}
		payload := p[hl : hl+int(h.Length)]
		used += hl + int(h.Length)
		ws.Cipher(payload, h.Mask, 0)

		if h.OpCode.IsControl() {
			if out := r.control(c, h.OpCode, payload); out != keepReading {
				return out, used, completed
			}
			continue
		}
		msg, compressed, whole := r.assemble(c, h, payload, compressed)
		if !whole {
			continue
		}
		completed = true
		var ok bool
		if compressed {
			var err error
			if ok, err = r.handleCompressed(c, msg); err != nil {
				code := ws.StatusInvalidFramePayloadData
				if errors.Is(err, errInflatedTooBig) {
					code = ws.StatusMessageTooBig
				}
				return r.fail(c, code, err), used, completed
			}
		} else {
			ok = c.receiver.HandleFrame(msg)
		}
		if c.rd != nil && c.rd.msg != nil {
			c.rd.msg = c.rd.msg[:0]
		}
		if c.state.Load()&stClosed != 0 {
			return tearDown, used, completed
		}
		if !ok {
			return stopReading, used, completed
		}
	}
}

// assemble adds a data frame to the connection's message and returns the
// message once it is whole, and whether it is compressed (as its first
// frame said). An unfragmented frame is passed through without a copy.
func (r *reader) assemble(c *Conn, h ws.Header, payload []byte, compressed bool) ([]byte, bool, bool) {
	if h.OpCode != ws.OpContinuation && h.Fin {
		return payload, compressed, true
	}
	rd := c.readState()
	if h.OpCode != ws.OpContinuation {
		rd.frag, rd.msgOp, rd.deflate = true, h.OpCode, compressed
	}
	rd.msg = append(rd.msg, payload...)
	if !h.Fin {
		return nil, false, false
	}
	rd.frag = false
	return rd.msg, rd.deflate, true
}

// handleCompressed hands the receiver a compressed message once
// decompressed into a pooled buffer, which is taken back after
// HandleFrame. The decompressed size is bounded by MaxMessageSize.
func (r *reader) handleCompressed(c *Conn, msg []byte) (bool, error) {
	p := r.srv.flate
	f := p.getInflater()
	defer p.putInflater(f)
	plain, err := f.inflate(msg, r.srv.cfg.MaxMessageSize)
	if err != nil {
		return false, err
	}
	return c.receiver.HandleFrame(plain), nil
}

// control answers a control frame.
func (r *reader) control(c *Conn, op ws.OpCode, payload []byte) outcome {
	switch op {
	case ws.OpPing:
		c.wmu.Lock()
		var err error
		if c.state.Load()&stClosed == 0 {
			err = c.writeLocked(ws.OpPong, payload)
		}
		c.wmu.Unlock()
		if err != nil {
			r.srv.log.Debug("websocket pong failed", "remote", c.RemoteAddr(), "error", err)
			c.abort()
			return tearDown
		}
	case ws.OpClose:
		r.peerClose(c, payload)
		return tearDown
	}
	return keepReading
}

// peerClose answers the peer's close frame with the same status code, as
// RFC 6455 section 5.5.1 suggests, or 1002 if the frame is malformed.
func (r *reader) peerClose(c *Conn, payload []byte) {
	if len(payload) == 0 {
		c.closeWith(ws.StatusNormalClosure, "")
		return
	}
	code, reason := ws.ParseCloseFrameDataUnsafe(payload)
	if len(payload) < 2 || ws.CheckCloseFrameData(code, reason) != nil {
		c.closeWith(ws.StatusProtocolError, "invalid close frame")
		return
	}
	c.closeWith(code, "")
}

var errTooBig = errors.New("message too big")

// fail closes c for a protocol violation, logging it.
func (r *reader) fail(c *Conn, code ws.StatusCode, err error) outcome {
	r.srv.log.Info("websocket protocol error", "remote", c.RemoteAddr(), "close_code", int(code), "error", err)
	c.closeWith(code, err.Error())
	return tearDown
}

// grow enlarges the buffer that holds an incomplete frame; frames() has
// checked the frame against MaxMessageSize, so growth stops at one frame.
func (r *reader) grow(data []byte) []byte {
	limit := int(r.srv.cfg.MaxMessageSize) + ws.MaxHeaderSize
	n := min(max(2*cap(data), initialReadBuf), limit)
	if n <= cap(data) {
		n = cap(data) + initialReadBuf
	}
	nb := make([]byte, len(data), n)
	copy(nb, data)
	return nb
}

// halfRead reports whether a message has started on c but not finished:
// rest holds the start of a frame, or a fragmented message is open.
func (c *Conn) halfRead(rest []byte) bool {
	return len(rest) > 0 || (c.rd != nil && c.rd.frag)
}

// restart moves the start of the unfinished message to now when there was
// none yet, or when a message completed meanwhile (what is left belongs to
// a newer one). It reports whether it moved.
func (rd *readState) restart(completed bool) bool {
	if rd.since.IsZero() || completed {
		rd.since = time.Now()
		return true
	}
	return false
}

// readState returns c's read state, creating it.
func (c *Conn) readState() *readState {
	if c.rd == nil {
		c.rd = c.srv.getReadState()
	}
	return c.rd
}

// closeWith is Close for the read side, which owns the connection already.
func (c *Conn) closeWith(code ws.StatusCode, reason string) { c.Close(uint32(code), reason) }

// headerLen is the size of the frame header that starts p, known from its
// first two bytes, or 0 if p is shorter than that.
func headerLen(p []byte) int {
	if len(p) < 2 {
		return 0
	}
	n := 2
	if p[1]&0x80 != 0 {
		n += 4
	}
	switch p[1] & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	return n
}

// compact drops the first n bytes of data, keeping its start.
func compact(data []byte, n int) []byte {
	if n == 0 {
		return data
	}
	m := copy(data, data[n:])
	return data[:m]
}

// isConnReset reports the errors of a peer that went away abruptly, which
// are not worth a log line.
func isConnReset(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}
