//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/gobwas/ws"
	"golang.org/x/sys/unix"
)

// gobwasEpollServer is a minimal prototype of readiness-driven reading:
// gobwas/ws for the handshake and framing, one EPOLLONESHOT registration per
// raw socket fd, a fixed pool of workers with their own read buffers. An idle
// connection owns no goroutine and no buffer. It assumes each read holds whole
// frames, which holds for the harness client (one write per frame) and nothing
// more: partial frames close the connection.
type gobwasEpollServer struct {
	open  *atomic.Int64
	epfd  int
	mu    sync.Mutex
	conns map[int32]*epConn
	work  chan *epConn
}

type epConn struct {
	nc net.Conn
	rc syscall.RawConn
	fd int
}

func newGobwasEpoll(open *atomic.Int64) (*gobwasEpollServer, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	s := &gobwasEpollServer{open: open, epfd: epfd, conns: make(map[int32]*epConn), work: make(chan *epConn, 256)}
	go s.poll()
	for range 4 * runtime.GOMAXPROCS(0) {
		go s.worker()
	}
	return s, nil
}

func (s *gobwasEpollServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	nc, _, _, err := ws.HTTPUpgrader{}.Upgrade(r, w)
	if err != nil {
		if nc != nil {
			nc.Close()
		}
		return
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		nc.Close()
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		nc.Close()
		return
	}
	c := &epConn{nc: nc, rc: rc}
	_ = rc.Control(func(fd uintptr) { c.fd = int(fd) })
	s.mu.Lock()
	s.conns[int32(c.fd)] = c
	s.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(c.fd)}
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		s.drop(c)
		return
	}
	s.open.Add(1)
}

func (s *gobwasEpollServer) poll() {
	events := make([]unix.EpollEvent, 256)
	for {
		n, err := unix.EpollWait(s.epfd, events, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		s.mu.Lock()
		for i := range n {
			if c := s.conns[events[i].Fd]; c != nil {
				s.work <- c
			}
		}
		s.mu.Unlock()
	}
}

func (s *gobwasEpollServer) worker() {
	buf := make([]byte, 4096)
	for c := range s.work {
		if !s.serve(c, buf) {
			s.drop(c)
			s.open.Add(-1)
		}
	}
}

// serve reads what is available, echoes every frame and re-arms the fd.
func (s *gobwasEpollServer) serve(c *epConn, buf []byte) bool {
	var n int
	var rerr error
	if err := c.rc.Control(func(fd uintptr) { n, rerr = unix.Read(int(fd), buf) }); err != nil {
		return false
	}
	if errors.Is(rerr, unix.EAGAIN) {
		return s.rearm(c)
	}
	if rerr != nil || n == 0 {
		return false
	}
	rd := bytes.NewReader(buf[:n])
	for rd.Len() > 0 {
		h, err := ws.ReadHeader(rd)
		if err != nil || int64(rd.Len()) < h.Length {
			return false
		}
		p := buf[n-rd.Len() : n-rd.Len()+int(h.Length)]
		_, _ = rd.Seek(h.Length, 1)
		if h.Masked {
			ws.Cipher(p, h.Mask, 0)
		}
		switch h.OpCode {
		case ws.OpClose:
			return false
		case ws.OpText, ws.OpBinary:
			if err := ws.WriteFrame(c.nc, ws.NewFrame(h.OpCode, true, p)); err != nil {
				return false
			}
		}
	}
	return s.rearm(c)
}

func (s *gobwasEpollServer) rearm(c *epConn) bool {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(c.fd)}
	return unix.EpollCtl(s.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev) == nil
}

func (s *gobwasEpollServer) drop(c *epConn) {
	s.mu.Lock()
	if s.conns[int32(c.fd)] == c {
		delete(s.conns, int32(c.fd))
	}
	s.mu.Unlock()
	_ = unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	c.nc.Close()
}

func (s *gobwasEpollServer) Shutdown() {}
