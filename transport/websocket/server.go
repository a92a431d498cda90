package websocket

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/gobwas/ws"
)

// Server upgrades HTTP requests to WebSocket connections and runs the
// readiness loop that reads them.
type Server struct {
	cfg    Config
	accept AcceptFunc
	log    *slog.Logger
	poll   *poller
	reaper *reaper
	work   chan *Conn

	writeBufs  sync.Pool // *writeBuf
	readStates sync.Pool // *readState
	readers    sync.Pool // *reader, for frames that came with the handshake

	gen atomic.Uint32
	n   atomic.Int64

	mu      sync.RWMutex
	conns   []*Conn // by fd
	closing bool

	live      sync.WaitGroup // registered connections not yet finished
	loops     sync.WaitGroup // poller, workers, reaper
	closeOnce sync.Once
	closeErr  error
}

// NewServer starts the readiness loop (one poller goroutine, cfg.Workers
// workers and a timer goroutine for ReadTimeout). accept is called for every
// upgraded connection.
func NewServer(cfg Config, accept AcceptFunc) (*Server, error) {
	if accept == nil {
		return nil, errors.New("websocket: nil AcceptFunc")
	}
	cfg = cfg.withDefaults()
	p, err := newPoller()
	if err != nil {
		return nil, fmt.Errorf("websocket: start poller: %w", err)
	}
	s := &Server{
		cfg:    cfg,
		accept: accept,
		log:    cfg.Logger,
		poll:   p,
		work:   make(chan *Conn, cfg.Workers),
	}
	s.writeBufs.New = func() any { return &writeBuf{b: make([]byte, 0, 1024)} }
	s.readStates.New = func() any { return new(readState) }
	s.readers.New = func() any { return newReader(s) }
	s.reaper = newReaper(cfg.ReadTimeout)

	s.loops.Add(2 + cfg.Workers)
	go func() {
		defer s.loops.Done()
		s.pollLoop()
	}()
	go func() {
		defer s.loops.Done()
		s.reaper.run()
	}()
	for range cfg.Workers {
		go func() {
			defer s.loops.Done()
			s.workLoop()
		}()
	}
	return s, nil
}

// NumConns is the number of open connections.
func (s *Server) NumConns() int { return int(s.n.Load()) }

// Close closes every connection with 3001 "shutdown" (unless it is closed
// already), waits until each has been handed to Session.HandleClose, then
// stops the poller and waits for the workers. New upgrades get 503.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		var conns []*Conn
		for _, c := range s.conns {
			if c != nil {
				conns = append(conns, c)
			}
		}
		s.mu.Unlock()

		// Close frames to slow peers may each take WriteTimeout: send them
		// with as many goroutines as there are workers.
		var wg sync.WaitGroup
		var next atomic.Int64
		for range min(s.cfg.Workers, len(conns)) {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < int64(len(conns)); i = next.Add(1) - 1 {
					conns[i].Close(closeShutdown, "shutdown")
				}
			})
		}
		wg.Wait()
		s.live.Wait()

		s.reaper.stop()
		if err := s.poll.wake(); err != nil {
			// Waiting for a poller that cannot be woken would hang.
			s.closeErr = fmt.Errorf("websocket: wake poller: %w", err)
			return
		}
		s.loops.Wait()
		if err := s.poll.close(); err != nil && s.closeErr == nil {
			s.closeErr = fmt.Errorf("websocket: close poller: %w", err)
		}
	})
	return s.closeErr
}

var errServerClosing = errors.New("server closing")

// register adds c to the connection table and to epoll. It fails once the
// server is closing.
func (s *Server) register(c *Conn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return errServerClosing
	}
	if err := s.poll.add(int(c.fd), c.gen); err != nil {
		return fmt.Errorf("epoll add: %w", err)
	}
	if int(c.fd) >= len(s.conns) {
		grown := make([]*Conn, max(int(c.fd)+1, 2*len(s.conns)))
		copy(grown, s.conns)
		s.conns = grown
	}
	s.conns[c.fd] = c
	s.live.Add(1)
	s.n.Add(1)
	return nil
}

// lookup returns the connection an epoll event is for, or nil for a stale
// event of a connection that has gone. Callers hold s.mu for reading.
func (s *Server) lookup(fd int32, gen uint32) *Conn {
	if fd < 0 || int(fd) >= len(s.conns) {
		return nil
	}
	if c := s.conns[fd]; c != nil && c.gen == gen {
		return c
	}
	return nil
}

// workLoop serves ready connections until the poller stops.
func (s *Server) workLoop() {
	r := newReader(s)
	for c := range s.work {
		if c.acquire() {
			c.release(r.serve(c), r)
		}
	}
}

// rearm asks epoll for c's next readiness event. Arming happens inside
// RawConn.Control so that the fd cannot be closed and reused by another
// connection meanwhile. A reading goroutine passes its reader, whose bound
// method spares the allocation of a closure per event; others pass nil.
func (s *Server) rearm(c *Conn, r *reader) {
	var err, cerr error
	if r != nil {
		r.armConn = c
		cerr = c.rc.Control(r.armFn)
		err = r.armErr
		r.armConn, r.armErr = nil, nil
	} else {
		err, cerr = s.armSlow(c)
	}
	if cerr != nil || err == nil {
		return // armed, or the socket is closed already and its reader tears it down
	}
	// Without readiness events nobody would ever read or tear down c.
	s.log.Error("websocket epoll re-arm failed", "remote", c.RemoteAddr(), "error", err)
	c.state.Or(stClosed)
	if r == nil {
		// Called from Close or WriteFrame, which must not run HandleClose.
		go func() {
			if c.acquire() {
				c.release(tearDown, nil)
			}
		}()
		return
	}
	if c.acquire() {
		c.release(tearDown, r)
	}
}

// armSlow arms c through a closure, for goroutines without a reader.
func (s *Server) armSlow(c *Conn) (armErr, controlErr error) {
	controlErr = c.rc.Control(func(fd uintptr) { armErr = s.poll.arm(int(fd), c.gen) })
	return armErr, controlErr
}

// acquire makes the calling goroutine the owner of c's read side. It fails
// when another goroutine owns it (a stale event) or c is finished.
func (c *Conn) acquire() bool {
	for {
		old := c.state.Load()
		if old&(stBusy|stFinished) != 0 {
			return false
		}
		if c.state.CompareAndSwap(old, old|stBusy) {
			return true
		}
	}
}

// release gives up the read side after serve. A closing connection is torn
// down here; otherwise the fd is re-armed unless the session stopped
// reading. stBusy is cleared before re-arming, so that the next event finds
// the connection free.
func (c *Conn) release(out outcome, r *reader) {
	for {
		old := c.state.Load()
		if out == tearDown || old&stClosed != 0 {
			c.finish()
			return
		}
		if c.state.CompareAndSwap(old, old&^stBusy) {
			break
		}
	}
	if out == keepReading {
		c.srv.rearm(c, r)
	}
}

// finish tears c down: it runs on the goroutine that owns the read side,
// once the connection is closing.
func (c *Conn) finish() {
	c.state.Store(stClosed | stFinished)
	s := c.srv
	if c.rd != nil {
		s.reaper.untrack(c)
		s.putReadState(c.rd)
		c.rd = nil
	}
	_ = c.rc.Control(func(fd uintptr) { _ = s.poll.del(int(fd)) })
	c.wmu.Lock() // a close frame being written goes out first (see Close)
	err := c.nc.Close()
	c.wmu.Unlock()
	if err != nil {
		s.log.Debug("websocket close socket", "remote", c.RemoteAddr(), "error", err)
	}
	s.mu.Lock()
	if int(c.fd) < len(s.conns) && s.conns[c.fd] == c {
		s.conns[c.fd] = nil
	}
	s.mu.Unlock()
	s.n.Add(-1)
	c.session.HandleClose()
	s.live.Done()
}

func (s *Server) getWriteBuf() *writeBuf {
	wb := s.writeBufs.Get().(*writeBuf)
	wb.b = wb.b[:0]
	return wb
}

// maxPooledBuf keeps rare big buffers out of the pools.
const maxPooledBuf = 64 << 10

func (s *Server) putWriteBuf(wb *writeBuf) {
	if cap(wb.b) <= maxPooledBuf+ws.MaxHeaderSize {
		s.writeBufs.Put(wb)
	}
}

func (s *Server) getReadState() *readState { return s.readStates.Get().(*readState) }

func (s *Server) putReadState(rd *readState) {
	if cap(rd.pending) > maxPooledBuf || cap(rd.msg) > maxPooledBuf {
		return
	}
	*rd = readState{pending: rd.pending[:0], msg: rd.msg[:0]}
	s.readStates.Put(rd)
}
