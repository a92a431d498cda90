//go:build linux

package loadgen

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// shard is one epoll instance and the goroutine that reads its
// connections. Connections are registered level-triggered: a connection
// whose bytes were not all read in one turn comes back in the next
// epoll_wait.
type shard struct {
	id     int
	pool   *Pool
	epfd   int
	wakefd int
	done   chan struct{}
	once   sync.Once

	// The longest turn and unread wait since the last takeSpans (ns):
	// written by the loop, taken by the worker at each step's end.
	stepTurn, stepUnread atomic.Int64

	mu    sync.Mutex
	conns []*Conn // by slot; nil slots are free
	free  []int32
	stopd bool

	// Owned by the loop goroutine.
	turn   time.Duration // the longest turn so far (ServerClose.Turn)
	buf    []byte
	dst    []byte
	n      int
	err    error
	readFn func(fd uintptr)
}

// readBuf is the shard's read buffer; it grows for larger frames.
const readBuf = 64 << 10

// maxReadsPerTurn bounds the reads of one connection per event, so one
// busy connection cannot starve the others: a connection with bytes
// waiting is read again only after a whole turn over the shard's other
// ready connections, and a server that judges clients by what they take
// sees it take nothing for that long. With eight reads a turn over 250
// connections that all had megabytes waiting took over a second on two
// loaded cores, and the server rightly cut some as not reading (the
// overload test's false failures); with two (128 KiB) the longest turn
// of an overload run was 0.72-0.94 s alone and 1.15 s in a full test run;
// with one, 0.46-0.54 s, at the same capacity (docs/benchmarks.md, "What
// the load tool knew"). One read of 64 KiB still reopens a full socket's
// receive window, which its kernel advertises again once the reader freed
// a sixteenth of the buffer: the whole of a 1 MiB one.
const maxReadsPerTurn = 1

func defaultShards() int { return runtime.GOMAXPROCS(0) }

func newShard(p *Pool, id int) (*shard, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wakefd), Pad: -1}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wakefd, &ev); err != nil {
		unix.Close(epfd)
		unix.Close(wakefd)
		return nil, fmt.Errorf("epoll add eventfd: %w", err)
	}
	s := &shard{id: id, pool: p, epfd: epfd, wakefd: wakefd, done: make(chan struct{}), buf: make([]byte, 0, readBuf)}
	s.readFn = func(fd uintptr) { s.n, s.err = unix.Read(int(fd), s.dst) }
	return s, nil
}

// adopt registers c with the shard.
func (s *shard) adopt(c *Conn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopd {
		return errors.New("pool is closing")
	}
	if n := len(s.free); n > 0 {
		c.slot = s.free[n-1]
		s.free = s.free[:n-1]
		s.conns[c.slot] = c
	} else {
		c.slot = int32(len(s.conns))
		s.conns = append(s.conns, c)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(c.fd), Pad: c.slot}
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		s.conns[c.slot] = nil
		s.free = append(s.free, c.slot)
		return fmt.Errorf("epoll add: %w", err)
	}
	if len(c.pending) > 0 {
		// Frames that arrived with the setup replies: wake the loop so it
		// reads them even if the socket stays quiet.
		s.wake()
	}
	return nil
}

func (s *shard) wake() {
	_, _ = unix.Write(s.wakefd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
}

// loop reads ready connections until stop.
func (s *shard) loop() {
	defer close(s.done)
	defer unix.Close(s.epfd)
	defer unix.Close(s.wakefd)
	events := make([]unix.EpollEvent, 256)
	ready := make([]*Conn, 0, len(events))
	var drain [8]byte
	for {
		n, err := unix.EpollWait(s.epfd, events, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			s.pool.noteError(fmt.Errorf("epoll_wait: %w", err))
			return
		}
		woken := false
		ready = ready[:0]
		s.mu.Lock()
		if s.stopd {
			s.mu.Unlock()
			return
		}
		for _, ev := range events[:n] {
			if ev.Pad < 0 {
				woken = true
				continue
			}
			if int(ev.Pad) < len(s.conns) {
				if c := s.conns[ev.Pad]; c != nil && c.fd == int(ev.Fd) {
					ready = append(ready, c)
				}
			}
		}
		if woken {
			_, _ = unix.Read(s.wakefd, drain[:])
			for _, c := range s.conns {
				if c != nil && len(c.pending) > 0 {
					ready = append(ready, c)
				}
			}
		}
		s.mu.Unlock()
		start := s.pool.clock.Now()
		for _, c := range ready {
			if c.left != 0 {
				wait := time.Duration(start - c.left)
				c.unread = max(c.unread, wait)
				storeMax(&s.stepUnread, int64(wait))
				c.left = 0
			}
			left, err := s.serve(c)
			if err != nil {
				s.teardown(c, err)
			} else if left {
				c.left = start
			}
		}
		turn := time.Duration(s.pool.clock.Now() - start)
		s.turn = max(s.turn, turn)
		storeMax(&s.stepTurn, int64(turn))
		clear(ready)
	}
}

// serve reads what c has and handles its complete frames. left reports
// that it stopped at maxReadsPerTurn with bytes still in the socket.
func (s *shard) serve(c *Conn) (left bool, err error) {
	data := append(s.buf[:0], c.pending...)
	c.pending = nil
	used, err := c.consume(s.id, data)
	data = data[:copy(data, data[used:])]
	left = true
	for reads := 0; err == nil && reads < maxReadsPerTurn; reads++ {
		if len(data) == cap(data) {
			data = append(data, make([]byte, cap(data))...)[:len(data)]
		}
		space := cap(data) - len(data)
		s.dst = data[len(data):cap(data)]
		if cerr := c.rc.Control(s.readFn); cerr != nil {
			err = cerr
			break
		}
		n, rerr := s.n, s.err
		s.dst = nil
		if errors.Is(rerr, syscall.EAGAIN) {
			left = false
			break
		}
		if rerr != nil {
			err = rerr
			break
		}
		if n == 0 {
			err = errors.New("connection closed by server without a close frame")
			break
		}
		data = data[:len(data)+n]
		used, err = c.consume(s.id, data)
		data = data[:copy(data, data[used:])]
		if n < space {
			left = false // a short read: the socket had no more
			break
		}
	}
	s.buf = data[:0]
	if err == nil && len(data) > 0 {
		c.pending = append([]byte(nil), data...)
	}
	return left && err == nil, err
}

// takeSpans returns the longest turn and unread wait since the last call.
func (s *shard) takeSpans() (turn, unread time.Duration) {
	return time.Duration(s.stepTurn.Swap(0)), time.Duration(s.stepUnread.Swap(0))
}

// teardown removes a connection the server or network closed.
func (s *shard) teardown(c *Conn, cause error) {
	if cl := (errClosedByServer{}); errors.As(cause, &cl) {
		sc := ServerClose{Sub: c.sub, Code: int(cl.code), Reason: cl.reason, At: s.pool.clock.Now(), Unread: c.unread, Turn: s.turn}
		sc.RcvBuf, _ = unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
		s.pool.noteServerClose(sc)
	}
	s.mu.Lock()
	_ = unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	s.conns[c.slot] = nil
	s.free = append(s.free, c.slot)
	s.mu.Unlock()
	_ = c.nc.Close()
	s.pool.current.Add(-1)
	s.pool.disconnected.Add(1)
	s.pool.noteError(cause)
}

// stop ends the loop and waits for it.
func (s *shard) stop() {
	s.once.Do(func() {
		s.mu.Lock()
		s.stopd = true
		s.mu.Unlock()
		s.wake()
	})
	<-s.done
}

// drain takes the shard's connections after stop.
func (s *shard) drain() []*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Conn
	for _, c := range s.conns {
		if c != nil {
			out = append(out, c)
		}
	}
	s.conns = nil
	return out
}

// bindNoPort lets connections from one source address share ephemeral
// ports across destinations (IP_BIND_ADDRESS_NO_PORT): the port is picked
// at connect time, per destination, instead of at bind time.
func bindNoPort(_, _ string, rc syscall.RawConn) error {
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	}); err != nil {
		return err
	}
	return serr
}
