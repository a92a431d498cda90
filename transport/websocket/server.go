package websocket

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/gobwas/ws"
)

// Server upgrades HTTP requests to WebSocket connections and reads them,
// through the read path Config.Poller selects.
type Server struct {
	cfg    Config
	poller Poller // resolved: PollerEpoll or PollerPortable
	path   readPath
	accept AcceptFunc
	log    *slog.Logger
	// refused rate-limits the warnings about refused origins.
	refused *refusedOrigins

	writeBufs  sync.Pool         // *writeBuf
	readStates sync.Pool         // *readState
	flate      *compressionPools // nil unless Config.Compression

	gen atomic.Uint32
	n   atomic.Int64

	mu      sync.RWMutex
	conns   []*Conn // by Conn.slot
	free    []int32 // unused slots of conns
	closing bool

	live      sync.WaitGroup // upgrades in progress and registered connections not yet finished
	closeOnce sync.Once
	closeErr  error
}

// readPath is what differs between the epoll and the portable ways of
// reading connections. Its methods are called per connection, never per
// message.
type readPath interface {
	// attach prepares c after the upgrade, before the AcceptFunc sees it;
	// an error rejects the connection.
	attach(c *Conn) error
	// add starts watching c, whose slot is set; it runs under Server.mu.
	add(c *Conn) error
	// start hands c's read side, which the caller owns, to the path, with
	// the bytes the client sent right behind its handshake.
	start(c *Conn, early []byte)
	// wake makes the read side notice that c is closing; old is c's state
	// from before it was marked closed.
	wake(c *Conn, old uint32)
	// remove stops watching c; it runs on the goroutine that tears c
	// down, before the socket is closed.
	remove(c *Conn)
	// shutdown stops the path once every connection has finished, and
	// waits for its goroutines.
	shutdown() error
}

// NewServer starts the read path Config.Poller selects: for epoll, one
// poller goroutine, cfg.Workers workers and a timer goroutine for
// ReadTimeout; the portable path starts a goroutine per connection as it
// comes. accept is called for every upgraded connection.
func NewServer(cfg Config, accept AcceptFunc) (*Server, error) {
	if accept == nil {
		return nil, errors.New("websocket: nil AcceptFunc")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("websocket: %w", err)
	}
	// Validate resolved it once already: this cannot fail.
	poller, err := cfg.Poller.Resolve()
	if err != nil {
		return nil, fmt.Errorf("websocket: Config.Poller %w", err)
	}
	cfg = cfg.WithDefaults()
	s := &Server{
		cfg:    cfg,
		poller: poller,
		accept: accept,
		log:    cfg.Logger,

		refused: newRefusedOrigins(),
	}
	s.writeBufs.New = func() any { return &writeBuf{b: make([]byte, 0, 1024)} }
	s.readStates.New = func() any { return new(readState) }
	if cfg.Compression {
		s.flate = newCompressionPools(cfg.CompressionLevel)
	}
	if poller == PollerEpoll {
		if s.path, err = newEpollPath(s); err != nil {
			return nil, fmt.Errorf("websocket: start epoll: %w", err)
		}
	} else {
		s.path = &portablePath{s: s}
	}
	return s, nil
}

// Poller is the read path the Server runs: PollerEpoll or PollerPortable.
func (s *Server) Poller() Poller { return s.poller }

// NumConns is the number of open connections.
func (s *Server) NumConns() int { return int(s.n.Load()) }

// Close closes every connection with 3001 "shutdown" (unless it is closed
// already), waits until each, and each connection still being upgraded,
// has been handed to Receiver.HandleClose, then
// stops the read path and waits for its goroutines. New upgrades get 503.
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
		// with Config.Workers goroutines.
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
		if err := s.path.shutdown(); err != nil {
			s.closeErr = fmt.Errorf("websocket: %w", err)
		}
	})
	return s.closeErr
}

var errServerClosing = errors.New("server closing")

// register gives c a slot in the connection table and starts watching it.
// It fails once the server is closing.
func (s *Server) register(c *Conn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return errServerClosing
	}
	if n := len(s.free); n > 0 {
		c.slot = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		c.slot = int32(len(s.conns))
		s.conns = append(s.conns, nil)
	}
	if err := s.path.add(c); err != nil {
		s.free = append(s.free, c.slot)
		return err
	}
	s.conns[c.slot] = c
	s.n.Add(1) // Server.live counts c already: its upgrade entered it
	return nil
}

// lookup returns the connection in slot with generation gen, or nil when
// that connection has gone (a stale epoll event). Callers hold s.mu for
// reading.
func (s *Server) lookup(slot int32, gen uint32) *Conn {
	if slot < 0 || int(slot) >= len(s.conns) {
		return nil
	}
	if c := s.conns[slot]; c != nil && c.gen == gen {
		return c
	}
	return nil
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

// release gives up the read side after reading. A closing connection is
// torn down here, and release reports false; otherwise it reports true,
// and the epoll path re-arms the fd unless the receiver stopped reading.
// stBusy is cleared before that, so that the next event finds the
// connection free.
func (c *Conn) release(out outcome) bool {
	for {
		old := c.state.Load()
		if out == tearDown || old&stClosed != 0 {
			c.finish()
			return false
		}
		if c.state.CompareAndSwap(old, old&^stBusy) {
			return true
		}
	}
}

// finish tears c down: it runs on the goroutine that owns the read side,
// once the connection is closing.
func (c *Conn) finish() {
	c.state.Store(stClosed | stFinished)
	s := c.srv
	s.path.remove(c)
	if c.rd != nil {
		s.putReadState(c.rd)
		c.rd = nil
	}
	c.wmu.Lock() // a close frame being written goes out first (see Close)
	err := c.nc.Close()
	c.wmu.Unlock()
	if err != nil {
		s.log.Debug("websocket close socket", "remote", c.RemoteAddr(), "error", err)
	}
	s.mu.Lock()
	if s.conns[c.slot] == c {
		s.conns[c.slot] = nil
		s.free = append(s.free, c.slot)
	}
	s.mu.Unlock()
	s.n.Add(-1)
	c.receiver.HandleClose()
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
