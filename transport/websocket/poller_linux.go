//go:build linux

package websocket

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// poller is an epoll instance plus an eventfd that wakes it for shutdown.
// Connection fds are registered EPOLLONESHOT, so each readiness event
// reaches one worker and the fd stays silent until that worker re-arms it.
// The event data holds the connection's slot in Server.conns and its
// generation; the eventfd's holds wakeSlot.
type poller struct {
	epfd   int
	wakefd int
}

const readEvents = unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT

// wakeSlot marks the eventfd's events; no connection has a negative slot.
const wakeSlot = -1

func newPoller() (*poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakeSlot}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wakefd, &ev); err != nil {
		unix.Close(epfd)
		unix.Close(wakefd)
		return nil, fmt.Errorf("epoll add eventfd: %w", err)
	}
	return &poller{epfd: epfd, wakefd: wakefd}, nil
}

func (p *poller) add(fd int, slot int32, gen uint32) error {
	ev := unix.EpollEvent{Events: readEvents, Fd: slot, Pad: int32(gen)}
	return unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev)
}

func (p *poller) arm(fd int, slot int32, gen uint32) error {
	ev := unix.EpollEvent{Events: readEvents, Fd: slot, Pad: int32(gen)}
	return unix.EpollCtl(p.epfd, unix.EPOLL_CTL_MOD, fd, &ev)
}

func (p *poller) del(fd int) error {
	return unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, fd, nil)
}

func (p *poller) wake() error {
	_, err := unix.Write(p.wakefd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	return err
}

func (p *poller) close() error {
	return errors.Join(unix.Close(p.epfd), unix.Close(p.wakefd))
}

// pollLoop waits for readiness events and hands each ready connection to a
// worker, until the eventfd is written. Then it closes the work channel,
// which stops the workers.
func (e *epollPath) pollLoop() {
	defer close(e.work)
	s := e.s
	events := make([]unix.EpollEvent, 256)
	ready := make([]*Conn, 0, len(events))
	for {
		n, err := unix.EpollWait(e.poll.epfd, events, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			s.log.Error("websocket epoll_wait failed; the transport stops reading", "error", err)
			return
		}
		stop := false
		ready = ready[:0]
		s.mu.RLock()
		for _, ev := range events[:n] {
			if ev.Fd == wakeSlot {
				stop = true
				continue
			}
			if c := s.lookup(ev.Fd, uint32(ev.Pad)); c != nil {
				ready = append(ready, c)
			}
		}
		s.mu.RUnlock()
		// Sending outside the lock: a worker tearing a connection down takes
		// it for writing.
		for _, c := range ready {
			e.work <- c
		}
		clear(ready)
		if stop {
			return
		}
	}
}
