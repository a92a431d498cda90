//go:build linux

package websocket

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// EpollAvailable reports whether PollerEpoll can run on this system.
const EpollAvailable = true

// epollPath is the readiness loop: the sockets are registered with one
// epoll instance (EPOLLONESHOT), and when one becomes readable a worker of
// a fixed pool reads everything available into the worker's own buffer,
// hands the complete messages to the Receiver and re-arms the fd. A frame
// that arrives only in part is copied aside (readState.pending) until the
// rest comes; the reaper bounds how long.
type epollPath struct {
	s       *Server
	poll    *poller
	reaper  *reaper
	work    chan *Conn
	readers sync.Pool      // *epollReader, for frames that came with the handshake
	loops   sync.WaitGroup // poller, workers, reaper
}

func newEpollPath(s *Server) (*epollPath, error) {
	p, err := newPoller()
	if err != nil {
		return nil, err
	}
	e := &epollPath{
		s:      s,
		poll:   p,
		reaper: newReaper(s.cfg.ReadTimeout),
		work:   make(chan *Conn, s.cfg.Workers),
	}
	e.readers.New = func() any { return newEpollReader(e) }
	e.loops.Go(e.pollLoop)
	e.loops.Go(e.reaper.run)
	for range s.cfg.Workers {
		e.loops.Go(e.workLoop)
	}
	return e, nil
}

// attach takes the socket's fd: the hijacked connection must expose it.
func (e *epollPath) attach(c *Conn) error {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return errors.New("connection has no file descriptor (terminate TLS in front, or use the portable poller)")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return fmt.Errorf("raw connection: %w", err)
	}
	if err := rc.Control(func(fd uintptr) { c.fd = int32(fd) }); err != nil {
		return fmt.Errorf("raw connection: %w", err)
	}
	c.rc = rc
	return nil
}

func (e *epollPath) add(c *Conn) error {
	var err error
	if cerr := c.rc.Control(func(fd uintptr) { err = e.poll.add(int(fd), c.slot, c.gen) }); cerr != nil {
		return fmt.Errorf("epoll add: %w", cerr)
	}
	if err != nil {
		return fmt.Errorf("epoll add: %w", err)
	}
	return nil
}

// start arms the fd, after serving the early bytes if there are any.
func (e *epollPath) start(c *Conn, early []byte) {
	if len(early) == 0 {
		e.release(c, keepReading, nil)
		return
	}
	r := e.readers.Get().(*epollReader)
	c.readState().pending = append(c.rd.pending, early...)
	e.release(c, r.serve(c), r)
	e.readers.Put(r)
}

// wake shuts the socket down. If a worker owns the read side, that worker
// sees stClosed when it lets go. Otherwise the shutdown makes the socket
// readable (EOF) and re-arming it brings a worker, even when the receiver
// had stopped reading.
func (e *epollPath) wake(c *Conn, old uint32) {
	if err := c.rc.Control(func(fd uintptr) { _ = sysShutdown(int(fd)) }); err != nil {
		return // already closed by the reader
	}
	if old&stBusy == 0 {
		e.rearm(c, nil)
	}
}

func (e *epollPath) remove(c *Conn) {
	if c.rd != nil {
		e.reaper.untrack(c)
	}
	_ = c.rc.Control(func(fd uintptr) { _ = e.poll.del(int(fd)) })
}

func (e *epollPath) shutdown() error {
	e.reaper.stop()
	if err := e.poll.wake(); err != nil {
		// Waiting for a poller that cannot be woken would hang.
		return fmt.Errorf("wake poller: %w", err)
	}
	e.loops.Wait()
	if err := e.poll.close(); err != nil {
		return fmt.Errorf("close poller: %w", err)
	}
	return nil
}

// workLoop serves ready connections until the poller stops.
func (e *epollPath) workLoop() {
	r := newEpollReader(e)
	for c := range e.work {
		if c.acquire() {
			e.release(c, r.serve(c), r)
		}
	}
}

// release gives up c's read side and re-arms its fd unless the receiver
// stopped reading or c was torn down.
func (e *epollPath) release(c *Conn, out outcome, r *epollReader) {
	if c.release(out) && out == keepReading {
		e.rearm(c, r)
	}
}

// rearm asks epoll for c's next readiness event. Arming happens inside
// RawConn.Control so that the fd cannot be closed and reused by another
// connection meanwhile. A reading goroutine passes its reader, whose bound
// method spares the allocation of a closure per event; others pass nil.
func (e *epollPath) rearm(c *Conn, r *epollReader) {
	var err, cerr error
	if r != nil {
		r.armConn = c
		cerr = c.rc.Control(r.armFn)
		err = r.armErr
		r.armConn, r.armErr = nil, nil
	} else {
		err, cerr = e.armSlow(c)
	}
	if cerr != nil || err == nil {
		return // armed, or the socket is closed already and its reader tears it down
	}
	if closingRace(c, err) {
		// Another goroutine is tearing c down and has taken its fd out of
		// epoll (ENOENT), or the poller is gone (EBADF): nothing is lost.
		e.s.log.Debug("websocket epoll re-arm after close", "remote", c.RemoteAddr(), "error", err)
	} else {
		// Without readiness events nobody would ever read or tear down c.
		e.s.log.Error("websocket epoll re-arm failed", "remote", c.RemoteAddr(), "error", err)
	}
	c.state.Or(stClosed)
	if r == nil {
		// Called from Close or WriteFrame, which must not run HandleClose.
		go func() {
			if c.acquire() {
				c.release(tearDown)
			}
		}()
		return
	}
	if c.acquire() {
		c.release(tearDown)
	}
}

// closingRace reports whether a failed re-arm is the expected race with
// a teardown: c is closing, and its fd is no longer registered (finish
// removed it) or the epoll instance is closed (shutdown).
func closingRace(c *Conn, err error) bool {
	return c.state.Load()&stClosed != 0 && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EBADF))
}

// armSlow arms c through a closure, for goroutines without a reader.
func (e *epollPath) armSlow(c *Conn) (armErr, controlErr error) {
	controlErr = c.rc.Control(func(fd uintptr) { armErr = e.poll.arm(int(fd), c.slot, c.gen) })
	return armErr, controlErr
}

// epollReader is a worker's reader, with what it needs to read and arm
// fds without allocating per event.
type epollReader struct {
	reader
	e *epollPath

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

// maxReadsPerTurn bounds the reads of one readiness event, so that a busy
// connection cannot keep a worker from the others; the fd is re-armed and
// comes back if it is still readable.
const maxReadsPerTurn = 16

func newEpollReader(e *epollPath) *epollReader {
	r := &epollReader{reader: reader{srv: e.s, buf: make([]byte, 0, initialReadBuf)}, e: e}
	r.readFn = r.readFD
	r.armFn = r.armFD
	return r
}

func (r *epollReader) readFD(fd uintptr) { r.n, r.err = sysRead(int(fd), r.dst) }

func (r *epollReader) armFD(fd uintptr) {
	r.armErr = r.e.poll.arm(int(fd), r.armConn.slot, r.armConn.gen)
}

// serve handles one readiness event of c; c.acquire must have succeeded.
func (r *epollReader) serve(c *Conn) outcome {
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

// keepPartial stores what is left of data in c and tracks the unfinished
// message's deadline; with nothing left c drops its read state.
func (r *epollReader) keepPartial(c *Conn, rest []byte, completed bool) {
	if !c.halfRead(rest) {
		if c.rd != nil {
			r.e.reaper.untrack(c)
			r.srv.putReadState(c.rd)
			c.rd = nil
		}
		return
	}
	rd := c.readState()
	rd.pending = append(rd.pending[:0], rest...)
	if rd.restart(completed) {
		r.e.reaper.track(c, rd.since.Add(r.srv.cfg.ReadTimeout))
	}
}
