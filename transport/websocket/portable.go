package websocket

import (
	"errors"
	"os"
	"sync"
	"time"
)

// portablePath reads each connection on a goroutine of its own, with
// blocking reads on the net.Conn, so it runs on any system and over any
// net.Conn (TLS too). A partial frame stays in the goroutine's buffer
// until the rest comes; a read deadline bounds how long (ReadTimeout), and
// there is none while nothing is half-read, so an idle connection is
// never timed out. Close wakes a blocked read by moving the deadline into
// the past.
//
// The price is a goroutine (its stack) and a read buffer held for every
// connection, idle or not.
type portablePath struct {
	s  *Server
	wg sync.WaitGroup // reading goroutines, and finishers of stopped connections
}

// A connection's read buffer starts at Config.ReadBufferSize. It grows
// for a large frame and shrinks back once the frame is handled, when it
// grew past idleReadBufFactor times its start: the largest buffer a
// connection keeps between messages.
const idleReadBufFactor = 4

func (p *portablePath) attach(*Conn) error { return nil }
func (p *portablePath) add(*Conn) error    { return nil }
func (p *portablePath) remove(*Conn)       {}

// start runs c's reading goroutine. c is registered and not finished, so
// the Add happens before shutdown's Wait (which follows Server.live's).
func (p *portablePath) start(c *Conn, early []byte) {
	p.wg.Go(func() {
		r := reader{srv: p.s, buf: make([]byte, 0, max(p.s.cfg.ReadBufferSize, len(early)))}
		c.release(r.readLoop(c, early))
	})
}

// wake ends a Read in progress, or makes the next one return at once: the
// reading goroutine checks stClosed after setting its own deadline, so it
// cannot miss the close. When the receiver had stopped reading, no
// goroutine owns c's read side any more and one is started to tear it
// down, since HandleClose must not run inside Close or WriteFrame.
func (p *portablePath) wake(c *Conn, old uint32) {
	_ = c.nc.SetReadDeadline(time.Unix(1, 0)) // long past: a blocked Read returns at once
	if old&stBusy == 0 {
		p.wg.Go(func() {
			if c.acquire() {
				c.release(tearDown)
			}
		})
	}
}

func (p *portablePath) shutdown() error {
	p.wg.Wait()
	return nil
}

// readLoop reads c until it closes or its receiver stops reading, handing
// the complete messages to the receiver; early holds the bytes that came
// behind the handshake.
func (r *reader) readLoop(c *Conn, early []byte) outcome {
	data := append(r.buf[:0], early...)
	var deadline time.Time // the read deadline set on c.nc; zero: none
	for {
		out, used, completed := r.frames(c, data)
		data = compact(data, used)
		if out != keepReading {
			return out
		}
		if next := r.messageDeadline(c, data, completed); !next.Equal(deadline) {
			if err := c.nc.SetReadDeadline(next); err != nil {
				r.srv.log.Debug("websocket set read deadline", "remote", c.RemoteAddr(), "error", err)
				c.abort()
				return tearDown
			}
			deadline = next
		}
		if c.state.Load()&stClosed != 0 {
			return tearDown
		}
		if start := r.srv.cfg.ReadBufferSize; len(data) == 0 && cap(data) > idleReadBufFactor*start {
			data = make([]byte, 0, start)
		}
		if len(data) == cap(data) {
			data = r.grow(data)
		}
		n, err := c.nc.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == nil {
			continue
		}
		switch {
		case c.state.Load()&stClosed != 0:
			// Woken by Close or abort.
		case errors.Is(err, os.ErrDeadlineExceeded) && !deadline.IsZero() && !time.Now().Before(deadline):
			r.srv.log.Info("websocket read timeout", "remote", c.RemoteAddr())
			c.Close(closePolicyViolation, "read timeout")
		default:
			if !isConnReset(err) {
				r.srv.log.Debug("websocket read failed", "remote", c.RemoteAddr(), "error", err)
			}
			c.abort()
		}
		return tearDown
	}
}

// messageDeadline is when the message c has started must be complete, or
// zero when nothing is half-read (c then drops its read state). rest is
// what is left of the buffer after the complete frames.
func (r *reader) messageDeadline(c *Conn, rest []byte, completed bool) time.Time {
	if !c.halfRead(rest) {
		if c.rd != nil {
			r.srv.putReadState(c.rd)
			c.rd = nil
		}
		return time.Time{}
	}
	rd := c.readState()
	rd.restart(completed)
	return rd.since.Add(r.srv.cfg.ReadTimeout)
}
