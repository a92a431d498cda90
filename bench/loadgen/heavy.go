package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/ws"

	"github.com/heraldhq/herald/protocol"
)

// heavyConn is a ClientHeavy connection: a goroutine of its own that
// reads frames through a buffered reader into a reused buffer and decodes
// every reply, and every publication's data, into reused structs.
type heavyConn struct {
	pool    *Pool
	nc      net.Conn
	br      *bufio.Reader
	op      ws.OpCode // the data frames' type: text (JSON) or binary (Protobuf)
	sub     int
	pong    bool // the server wants pongs
	closing atomic.Bool
	done    chan struct{}
	end     ownedEnd

	wmu  sync.Mutex // orders the reader's pongs and close's close frame
	wbuf []byte

	// Read state, owned by the reading goroutine.
	msg     []byte     // the current message (fragments joined)
	ctl     []byte     // a control frame's payload
	cur     jsonCursor // JSON replies
	reply   heavyReply // the reply being handled
	proto   protocol.Reply
	payload heavyPayload
	batch   []Message // the frame's publications, delivered together
}

// dialHeavy connects and subscribes connection i, reading the replies
// the heavy way; start begins its reading goroutine.
func (p *Pool) dialHeavy(ctx context.Context, i, sub int) (ownedConn, func(), error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	u := p.urls[i%len(p.urls)]
	nc, err := p.dialer(i).DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, nil, err
	}
	deadline, _ := ctx.Deadline()
	_ = nc.SetDeadline(deadline)
	wd := ws.Dialer{}
	op := ws.OpText
	if p.cfg.Format == protocol.TypeProtobuf {
		wd.Protocols = []string{"centrifuge-protobuf"}
		op = ws.OpBinary
	}
	hbr, _, err := wd.Upgrade(nc, u)
	if err != nil {
		_ = nc.Close()
		return nil, nil, fmt.Errorf("websocket handshake with %s: %w", u.Host, err)
	}
	var rd io.Reader = nc
	if hbr != nil {
		// Bytes the handshake reader buffered come first.
		rest, _ := hbr.Peek(hbr.Buffered())
		rd = io.MultiReader(bytes.NewReader(slices.Clone(rest)), nc)
		ws.PutReader(hbr)
	}
	c := &heavyConn{pool: p, nc: nc, br: newHeavyReader(rd), op: op, sub: sub, pong: true, done: make(chan struct{})}
	if err := c.handshake(i); err != nil {
		_ = nc.Close()
		return nil, nil, err
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		_ = nc.Close()
		return nil, nil, err
	}
	return c, func() { go c.read() }, nil
}

// newHeavyReader buffers a connection's reads: a burst of coalesced
// frames is read with one system call.
func newHeavyReader(rd io.Reader) *bufio.Reader { return bufio.NewReaderSize(rd, 16<<10) }

// handshake sends connect and the subscribes in one message and reads
// until each has its reply.
func (c *heavyConn) handshake(i int) error {
	frame, err := c.pool.connectFrame(i)
	if err != nil {
		return err
	}
	if err := c.write(c.op, frame); err != nil {
		return fmt.Errorf("send connect: %w", err)
	}
	want, got := c.pool.setupReplies(), 0
	for got < want {
		err := c.readMessage(func(r *heavyReply) error {
			switch {
			case r.id == 0:
				return c.handle(r)
			case r.hasError:
				return c.pool.setupError(r.protoError())
			case r.hasConnect:
				c.pong = r.connect.pong || r.connect.ping == 0
			case r.hasSubscribe:
				c.pool.recovered.Add(int64(r.subscribe.npubs))
			}
			got++
			return nil
		})
		if err != nil {
			return fmt.Errorf("waiting for connect/subscribe replies (%d of %d): %w", got, want, err)
		}
	}
	return nil
}

// write sends one final frame (masked, as clients must).
func (c *heavyConn) write(op ws.OpCode, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = appendClientFrame(c.wbuf[:0], op, payload)
	_, err := c.nc.Write(c.wbuf)
	return err
}

// readMessage reads frames until a data message is whole, answering
// control frames, then decodes each of its replies into c.reply and
// hands it to fn. The frame's publications reach the pool's handler after
// the last reply, stamped once.
func (c *heavyConn) readMessage(fn func(*heavyReply) error) error {
	msg, err := c.nextMessage()
	if err != nil {
		return err
	}
	c.batch = c.batch[:0]
	err = c.decodeFrame(msg, fn)
	if len(c.batch) > 0 {
		c.pool.deliverAll(c.sub, c.batch)
	}
	return err
}

// decodeFrame decodes each reply of a message into c.reply and hands it
// to fn.
func (c *heavyConn) decodeFrame(msg []byte, fn func(*heavyReply) error) error {
	if c.pool.cfg.Format == protocol.TypeProtobuf {
		return protocol.SplitFrame(protocol.TypeProtobuf, msg, func(b []byte) error {
			c.proto.Reset()
			if err := c.proto.UnmarshalVT(b); err != nil {
				return fmt.Errorf("decode reply: %w", err)
			}
			c.reply.fromProto(&c.proto)
			return fn(&c.reply)
		})
	}
	return protocol.SplitFrame(protocol.TypeJSON, msg, func(b []byte) error {
		c.cur.reset(b)
		if err := c.reply.decodeJSON(&c.cur); err != nil {
			return fmt.Errorf("decode reply: %w", err)
		}
		return fn(&c.reply)
	})
}

// nextMessage returns the next data message, read into c.msg.
func (c *heavyConn) nextMessage() ([]byte, error) {
	c.msg = c.msg[:0]
	started := false
	for {
		f, length, err := c.nextHeader()
		if err != nil {
			return nil, err
		}
		switch f.op {
		case ws.OpPing, ws.OpPong, ws.OpClose:
			if length > 125 {
				return nil, fmt.Errorf("control frame of %d bytes", length)
			}
			c.ctl = slices.Grow(c.ctl[:0], int(length))[:length]
			if _, err := io.ReadFull(c.br, c.ctl); err != nil {
				return nil, err
			}
			if err := c.control(f.op); err != nil {
				return nil, err
			}
			continue
		case ws.OpContinuation:
			if !started {
				return nil, errors.New("continuation frame without a first fragment")
			}
		case ws.OpText, ws.OpBinary:
			if started {
				return nil, errors.New("data frame inside a fragmented message")
			}
			started = true
		default:
			return nil, fmt.Errorf("unknown frame opcode %d", f.op)
		}
		n := len(c.msg)
		if limit := c.pool.cfg.MaxMessage; int64(n)+length > limit {
			return nil, fmt.Errorf("message over the %d-byte limit", limit)
		}
		c.msg = slices.Grow(c.msg, int(length))[:n+int(length)]
		if _, err := io.ReadFull(c.br, c.msg[n:]); err != nil {
			return nil, err
		}
		if f.fin {
			return c.msg, nil
		}
	}
}

// nextHeader reads one frame header from the buffered reader.
func (c *heavyConn) nextHeader() (frame, int64, error) {
	p, err := c.br.Peek(2)
	if err != nil {
		return frame{}, 0, err
	}
	if hl := frameHeaderLen(p); hl > 2 {
		if p, err = c.br.Peek(hl); err != nil {
			return frame{}, 0, err
		}
	}
	f, hl, length, err := frameHeader(p, c.pool.cfg.MaxMessage)
	if err != nil {
		return f, 0, err
	}
	_, _ = c.br.Discard(hl)
	return f, length, nil
}

// control answers a ping, and a close frame with the close it returns as
// errClosedByServer.
func (c *heavyConn) control(op ws.OpCode) error {
	switch op {
	case ws.OpPing:
		return c.write(ws.OpPong, c.ctl)
	case ws.OpClose:
		code, reason := ws.ParseCloseFrameData(c.ctl)
		_ = c.write(ws.OpClose, ws.NewCloseFrameBody(code, ""))
		return errClosedByServer{code: code, reason: reason}
	}
	return nil
}

// handle acts on a reply without an id: a push, or the server's ping.
// A publication's data is decoded here; it is delivered with the frame's
// others.
func (c *heavyConn) handle(r *heavyReply) error {
	switch {
	case r.hasPush && r.push.kind == "pub":
		m, ok := c.payload.decode(r.push.pub.data)
		if ok && c.pool.batchHandler != nil {
			c.batch = append(c.batch, m)
			return nil
		}
		if c.pool.handler != nil {
			c.pool.handler.Publication(c.pool.shardOf(c.sub), c.sub, string(r.push.channel), r.push.pub.data, c.pool.clock.Now())
		}
	case r.hasPush:
	case c.pong:
		if err := c.write(c.op, pongPayload[c.pool.cfg.Format]); err != nil {
			return fmt.Errorf("send pong: %w", err)
		}
	}
	return nil
}

// read is the connection's goroutine: it reads until the connection ends.
func (c *heavyConn) read() {
	defer close(c.done)
	handle := func(r *heavyReply) error {
		if r.id == 0 {
			return c.handle(r)
		}
		return nil
	}
	for {
		if err := c.readMessage(handle); err != nil {
			_ = c.nc.Close()
			c.end.finish(c.pool, c, c.closing.Load(), err)
			return
		}
	}
}

// close sends a normal close frame, closes the socket and waits for the
// reading goroutine.
func (c *heavyConn) close() {
	if c.closing.CompareAndSwap(false, true) {
		_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
		_ = c.write(ws.OpClose, ws.NewCloseFrameBody(ws.StatusNormalClosure, ""))
		_ = c.nc.Close()
	}
	<-c.done
}
