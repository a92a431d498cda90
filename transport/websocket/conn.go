package websocket

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/gobwas/ws"

	"github.com/heraldhq/herald/protocol"
)

// ErrClosed is returned by WriteFrame once the connection is closing.
var ErrClosed = errors.New("websocket: connection closed")

// Bits of Conn.state. Only the goroutine that set stBusy reads or changes
// Conn.rd and may run the Receiver; stFinished is set by that goroutine when
// it tears the connection down.
const (
	stBusy     uint32 = 1 << iota // a worker, the connection's goroutine or the upgrading goroutine owns the read side
	stClosed                      // closing: no more writes, the read side tears down
	stFinished                    // torn down, HandleClose called
)

// Close codes the transport sends on its own behalf.
const (
	closeShutdown        = 3001
	closePolicyViolation = uint32(ws.StatusPolicyViolation)     // 1008
	closeInternalError   = uint32(ws.StatusInternalServerError) // 1011
)

// Conn is one WebSocket connection. It implements hub.Transport.
type Conn struct {
	srv      *Server
	nc       net.Conn
	rc       syscall.RawConn // epoll only: the socket's fd
	receiver Receiver
	proto    protocol.Type
	// fd is rc's fd, for tryWrite (fastwrite_unix.go), epoll only. Here,
	// in the padding after proto, it keeps a Conn at 128 bytes, its size
	// class (after rc it took 136, rounded up to 144).
	fd      int32
	slot    int32  // index in Server.conns; epoll events carry it
	gen     uint32 // tells this connection's epoll events from a previous user of slot
	state   atomic.Uint32
	deflate bool          // permessage-deflate was negotiated
	wmu     sync.Mutex    // serialises frames on the wire
	pw      *pendingWrite // a frame StartFrame began, under wmu until FinishFrame
	rd      *readState    // partial input; nil while nothing is half-read
	pace    peerPace      // whether the client has been reading, as writes saw it (pace.go); under wmu
}

// Protocol is the connection's encoding for its whole life.
func (c *Conn) Protocol() protocol.Type { return c.proto }

// RemoteAddr is the peer's address, for logs.
func (c *Conn) RemoteAddr() string { return c.nc.RemoteAddr().String() }

// WriteFrame writes frame as one data frame: text for JSON, binary for
// Protobuf. It blocks at most Config.WriteTimeout and does not keep frame. One
// writer at a time; safe concurrently with reads and Close. A failed write
// leaves the stream unusable, so it also closes the connection (without a
// close frame).
//
// On a connection that negotiated compression, a frame of at least
// Config.CompressionMinSize bytes is compressed first, outside the write
// lock, with a pooled compressor.
func (c *Conn) WriteFrame(frame []byte) error {
	h, frame, d, err := c.dataFrame(frame)
	if err != nil {
		return err
	}
	defer c.putDeflater(d)
	c.wmu.Lock()
	if c.state.Load()&stClosed != 0 {
		c.wmu.Unlock()
		return ErrClosed
	}
	err = c.writeHeaderLocked(h, frame)
	c.wmu.Unlock()
	if err != nil {
		c.abort()
		return fmt.Errorf("websocket write to %s: %w", c.RemoteAddr(), err)
	}
	return nil
}

// dataFrame is the header and payload of a data frame carrying frame:
// compressed, with the compressor that holds the payload (to be given back
// once it is written), when the connection negotiated compression and
// frame is large enough.
func (c *Conn) dataFrame(frame []byte) (ws.Header, []byte, *deflater, error) {
	op := ws.OpText
	if c.proto == protocol.TypeProtobuf {
		op = ws.OpBinary
	}
	h := ws.Header{Fin: true, OpCode: op}
	if !c.deflate || len(frame) < c.srv.cfg.CompressionMinSize {
		return h, frame, nil, nil
	}
	d := c.srv.flate.getDeflater()
	z, err := d.compress(frame)
	if err != nil {
		c.srv.flate.putDeflater(d)
		return h, nil, nil, fmt.Errorf("websocket write to %s: %w", c.RemoteAddr(), err)
	}
	h.Rsv = compressedRsv
	return h, z, d, nil
}

// Close sends a close frame with code and reason (cut to 123 bytes) and
// closes the connection; HandleClose follows on the reading goroutine. It is idempotent
// and safe concurrently with WriteFrame (it waits for a write in progress,
// at most Config.WriteTimeout).
func (c *Conn) Close(code uint32, reason string) {
	// The write lock is taken before the connection is marked closed, and
	// finish takes it before closing the socket: so the reader, which tears
	// the connection down as soon as it sees it closed, cannot close the
	// socket before the close frame is written.
	c.wmu.Lock()
	old, ok := c.markClosed()
	if !ok {
		c.wmu.Unlock()
		return
	}
	err := c.writeLocked(ws.OpClose, closeBody(code, reason))
	c.wmu.Unlock()
	if err != nil {
		c.srv.log.Debug("websocket close frame not sent", "remote", c.RemoteAddr(), "error", err)
	}
	c.wakeReader(old)
}

// abort closes the connection without a close frame: the peer is gone or
// the byte stream is broken.
func (c *Conn) abort() {
	if old, ok := c.markClosed(); ok {
		c.wakeReader(old)
	}
}

// markClosed sets stClosed and returns the state before, or false if the
// connection was closing already.
func (c *Conn) markClosed() (uint32, bool) {
	for {
		old := c.state.Load()
		if old&stClosed != 0 {
			return old, false
		}
		if c.state.CompareAndSwap(old, old|stClosed) {
			return old, true
		}
	}
}

// wakeReader makes the read side tear the connection down, through the
// read path; old is the state from before markClosed.
func (c *Conn) wakeReader(old uint32) { c.srv.path.wake(c, old) }

// writeLocked writes one unfragmented frame under c.wmu with the write
// deadline. Small frames go out in one write through a pooled buffer.
func (c *Conn) writeLocked(op ws.OpCode, payload []byte) error {
	return c.writeHeaderLocked(ws.Header{Fin: true, OpCode: op}, payload)
}

// writeHeaderLocked is writeLocked for a header with more than an opcode
// (the compression bit); it sets h.Length. A data frame to a client that
// has been reading gets the reader's grace (pace.go); a control frame (a
// pong, the close frame) does not: Close waits for it under the write lock.
func (c *Conn) writeHeaderLocked(h ws.Header, payload []byte) error {
	h.Length = int64(len(payload))
	wb := c.srv.getWriteBuf()
	defer c.srv.putWriteBuf(wb)
	if err := ws.WriteHeaderBuffer(wb, h, wb.hdr[:]); err != nil {
		return err
	}
	grace := h.OpCode.IsData()
	if len(payload) > maxCopiedPayload {
		if err := c.writeAll(wb.b, grace); err != nil {
			return err
		}
		return c.writeAll(payload, grace)
	}
	wb.b = append(wb.b, payload...)
	return c.writeAll(wb.b, grace)
}

// writeAll writes b: first without waiting (tryWrite), which is all a
// socket with room in its buffer needs, then what is left with the write
// deadline. The deadline bounds progress, not the whole write: a peer that
// took at least minWriteProgress bytes within WriteTimeout is reading,
// however far behind it is, and gets another WriteTimeout. So a client that
// reads steadily is never cut for the size of what waits for it, and one
// that stops reading is cut after WriteTimeout, or, when grace is set and
// it had been reading before this write found its socket full, after
// readerStallWindows of them (pace.go).
//
// What the peer took is counted by the kernel where it can be (Delivered),
// not by what this write got into the socket: a full send buffer wakes its
// writer only once a good part of it has drained, and a busy node runs the
// woken writer late, so a write can get nothing in for a whole
// WriteTimeout while its peer reads hundreds of kilobytes of what was
// already queued.
func (c *Conn) writeAll(b []byte, grace bool) error {
	n, err := c.tryWrite(b)
	if err != nil {
		return err
	}
	if n == len(b) {
		if grace {
			c.paced(n)
		}
		return nil
	}
	// The deadline armed below ends with this write, so that an idle
	// connection holds no timer of the runtime's.
	defer c.nc.SetWriteDeadline(time.Time{}) //nolint:errcheck // the write's own error is what counts
	timeout := c.srv.cfg.WriteTimeout
	// took is what the peer had taken when the current WriteTimeout
	// began: read once here, then at each deadline, whose reading also
	// starts the next window.
	took, known := c.Delivered()
	windows := 1
	if grace && known && c.pace.reading(took, time.Now().UnixNano(), timeout) {
		windows = readerStallWindows
	}
	b = b[n:]
	for idle, progressed := 0, 0; ; {
		if err := c.nc.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
			return err
		}
		n, err := c.nc.Write(b)
		b = b[n:]
		if err == nil {
			return nil
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
		before, counted := took, known
		took, known = c.Delivered()
		// Where the kernel counts what the peer took, that count alone is
		// progress: what this write got into the socket can be the local
		// send buffer growing (300 KB to a client that never read).
		progress := n >= minWriteProgress
		if counted && known {
			progress = took-before >= minWriteProgress
		}
		if progress {
			idle = 0
			if progressed++; grace && progressed >= 2 {
				windows = readerStallWindows // it reads (pace.go)
			}
			continue
		}
		if idle++; idle >= windows {
			return err
		}
	}
}

// minWriteProgress is what a peer must take within one WriteTimeout to
// count as reading: 16 KiB/s at the default second, far below any network a
// client can use and far above a peer that has stopped.
const minWriteProgress = 16 << 10

// maxCopiedPayload is the largest payload copied behind its header to go out
// in one write; above it the copy costs more than a second syscall.
const maxCopiedPayload = 64 << 10

// writeBuf is a pooled frame buffer; it is an io.Writer for
// ws.WriteHeaderBuffer.
type writeBuf struct {
	b   []byte
	hdr [ws.MaxHeaderSize]byte
}

func (w *writeBuf) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// closeBody encodes a close frame payload; the reason is cut to fit the 125
// bytes of a control frame, at a UTF-8 boundary.
func closeBody(code uint32, reason string) []byte {
	const maxReason = ws.MaxControlFramePayloadSize - 2
	if len(reason) > maxReason {
		n := maxReason
		for n > 0 && !utf8.RuneStart(reason[n]) {
			n--
		}
		reason = reason[:n]
	}
	p := make([]byte, 2+len(reason))
	ws.PutCloseFrameBody(p, ws.StatusCode(code), reason)
	return p
}
