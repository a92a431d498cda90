//go:build unix

package loadgen

import "syscall"

// setRcvBuf is a dialer's Control that shrinks the socket's receive
// buffer to n bytes before it connects (the window it advertises follows),
// so a client that stops reading fills the server's socket soon.
func setRcvBuf(n int) func(_, _ string, rc syscall.RawConn) error {
	return func(_, _ string, rc syscall.RawConn) error {
		if n <= 0 {
			return nil
		}
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
		}); err != nil {
			return err
		}
		return serr
	}
}
