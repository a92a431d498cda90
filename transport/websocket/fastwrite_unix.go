//go:build unix

package websocket

import (
	"syscall"
)

// tryWrite makes one non-blocking write of b straight to the socket of an
// epoll connection and returns how much was written; when the socket's
// buffer is full (EAGAIN), or the connection has no raw socket, it leaves
// the rest to the caller's deadline-bounded write.
//
// It writes to the fd by number, not through syscall.RawConn.Write: that
// one takes the fd's reference count and resets its poll state on every
// call, which with the pooled closure it needs was a fifth of the node's
// own work per delivered copy (server's BenchmarkFanoutLoopback). Nor
// does it arm the write deadline: a timer update per write was about 5%
// of the CPU of a large fan-out, and a write to a socket with room in its
// buffer never waits.
//
// Writing by number is safe because the fd stays this socket's while the
// caller holds c.wmu, as every caller does: the socket is closed only
// under c.wmu (finish, reject), after the connection is marked closed,
// and a writer that takes c.wmu after that sees the mark and writes
// nothing (Close's close frame is written before finish can close).
func (c *Conn) tryWrite(b []byte) (int, error) {
	if c.rc == nil {
		return 0, nil
	}
	for {
		n, err := syscall.Write(int(c.fd), b)
		switch err {
		case nil:
			return n, nil
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, nil
		default:
			return 0, err
		}
	}
}
