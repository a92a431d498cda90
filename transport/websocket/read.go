package websocket

import (
	"bytes"
	"errors"
	"io"
	"time"

	"github.com/gobwas/ws"
)

// readState is what a connection keeps between two readiness events while a
// message is only partly there. Idle connections have none.
type readState struct {
	pending []byte    // start of a frame whose end has not arrived
	msg     []byte    // fragments of a message so far
	msgOp   ws.OpCode // opcode of the first fragment
	frag    bool      // a fragmented message is open
	since   time.Time // when the unfinished message was first seen
}

// reader is the scratch space of one reading goroutine: a worker owns one;
// the upgrading goroutine borrows one when the client sent frames right
// behind its handshake.
type reader struct {
	srv *Server
	buf []byte
	br  bytes.Reader
	hdr [ws.MaxHeaderSize]byte

	// Arguments and results of readFD and armFD, which are bound once as
	// method values so that RawConn.Control does not allocate per event.
	dst     []byte
	n       int
	err     error
	readFn  func(fd uintptr)
	armConn *Conn
	armErr  error
	armFn   func(fd uintptr)
}

// initialReadBuf is a reader's buffer size; it grows up to one maximal frame.
const initialReadBuf = 16 << 10

// maxReadsPerTurn bounds the reads of one readiness event, so that a busy
// connection cannot keep a worker from the others; the fd is re-armed and
// comes back if it is still readable.
const maxReadsPerTurn = 16

func newReader(s *Server) *reader {
	r := &reader{srv: s, buf: make([]byte, 0, initialReadBuf)}
	r.readFn = r.readFD
	r.armFn = r.armFD
	return r
}

func (r *reader) readFD(fd uintptr) { r.n, r.err = sysRead(int(fd), r.dst) }

func (r *reader) armFD(fd uintptr) { r.armErr = r.srv.poll.arm(int(fd), r.armConn.gen) }

// outcome of reading a connection.
type outcome uint8

const (
	keepReading outcome = iota // re-arm the fd
	stopReading                // the session asked to stop; do not re-arm
	tearDown                   // the connection is closing: finish it
)

// serve handles one readiness event of c; c.acquire must have succeeded.
func (r *reader) serve(c *Conn) outcome {
	if c.state.Load()&stClosed != 0 {
		return tearDown
	}
	data := r.buf[:0]
	if c.rd != nil && len(c.rd.pending) > 0 {
		data = append(data, c.rd.pending...)
		c.rd.pending = c.rd.pending[:0]
	}
	// Bytes the upgrading goroutine found behind the handshake, or left
	// from the last event, may already hold whole frames.
	out, used, completed := r.frames(c, data)
	data = compact(data, used)
	for reads := 0; out == keepReading && reads < maxReadsPerTurn; reads++ {
		if len(data) == cap(data) {
			data = r.grow(data)
		}
		r.dst = data[len(data):cap(data)]
		if err := c.rc.Control(r.readFn); err != nil {
			return tearDown // closed under us
		}
		n, err := r.n, r.err
		r.dst = nil
		if errors.Is(err, errWouldBlock) {
			break
		}
		if err != nil || n == 0 {
			if err != nil && !isConnReset(err) {
				r.srv.log.Debug("websocket read failed", "remote", c.RemoteAddr(), "error", err)
			}
			c.abort()
			return tearDown
		}
		short := n < cap(data)-len(data)
		data = data[:len(data)+n]
		var done bool
		out, used, done = r.frames(c, data)
		completed = completed || done
		data = compact(data, used)
		if short {
			break // the socket is most likely drained; level-triggered re-arm covers the rest
		}
	}
	r.buf = data[:0]
	if out == tearDown {
		return tearDown
	}
	r.keepPartial(c, data, completed)
	return out
}

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
		msg, whole := r.assemble(c, h, payload)
		if !whole {
			continue
		}
		completed = true
		ok := c.session.HandleFrame(msg)
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
// message once it is whole. An unfragmented frame is passed through without
// a copy.
func (r *reader) assemble(c *Conn, h ws.Header, payload []byte) ([]byte, bool) {
	if h.OpCode != ws.OpContinuation && h.Fin {
		return payload, true
	}
	rd := c.readState()
	if h.OpCode != ws.OpContinuation {
		rd.frag, rd.msgOp = true, h.OpCode
	}
	rd.msg = append(rd.msg, payload...)
	if !h.Fin {
		return nil, false
	}
	rd.frag = false
	return rd.msg, true
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

// keepPartial stores what is left of data in c and tracks the unfinished
// message's deadline; with nothing left c drops its read state.
func (r *reader) keepPartial(c *Conn, rest []byte, completed bool) {
	if len(rest) == 0 && (c.rd == nil || !c.rd.frag) {
		if c.rd != nil {
			r.srv.reaper.untrack(c)
			r.srv.putReadState(c.rd)
			c.rd = nil
		}
		return
	}
	rd := c.readState()
	rd.pending = append(rd.pending[:0], rest...)
	if rd.since.IsZero() || completed {
		rd.since = time.Now()
		r.srv.reaper.track(c, rd.since.Add(r.srv.cfg.ReadTimeout))
	}
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
	return errors.Is(err, io.EOF) || errors.Is(err, errConnReset)
}
