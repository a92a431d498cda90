//go:build linux || darwin

package server

import (
	"net"

	"golang.org/x/sys/unix"
)

// lowatListener sets TCP_NOTSENT_LOWAT (http.tcp_notsent_lowat) on every
// connection it accepts: on Linux, a listening socket's value is not
// inherited by its connections. A connection the option cannot be set on
// is served anyway, with the kernel's default.
type lowatListener struct {
	net.Listener
	n int
}

func (l lowatListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		_ = setNotSentLowat(c, l.n)
	}
	return c, err
}

func setNotSentLowat(c net.Conn, n int) error {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, n)
	}); err != nil {
		return err
	}
	return serr
}
