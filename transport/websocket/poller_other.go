//go:build !linux

package websocket

import (
	"errors"
	"syscall"
)

// The readiness loop is built on epoll; other systems get an error from
// NewServer, and these stubs keep the package compiling.

type poller struct{}

var errNotLinux = errors.New("the WebSocket transport needs Linux (epoll)")

const (
	errWouldBlock = syscall.EAGAIN
	errConnReset  = syscall.ECONNRESET
)

func newPoller() (*poller, error)              { return nil, errNotLinux }
func (p *poller) add(fd int, gen uint32) error { return errNotLinux }
func (p *poller) arm(fd int, gen uint32) error { return errNotLinux }
func (p *poller) del(fd int) error             { return errNotLinux }
func (p *poller) wake() error                  { return errNotLinux }
func (p *poller) close() error                 { return errNotLinux }
func (s *Server) pollLoop()                    { close(s.work) }
func sysRead(fd int, p []byte) (int, error)    { return 0, errNotLinux }
func sysShutdown(fd int) error                 { return errNotLinux }
