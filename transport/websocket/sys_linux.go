//go:build linux

package websocket

import "golang.org/x/sys/unix"

// errWouldBlock is sysRead's "nothing to read" on a non-blocking socket.
const errWouldBlock = unix.EAGAIN

// sysRead reads from a non-blocking socket; it returns errWouldBlock when
// nothing is there.
func sysRead(fd int, p []byte) (int, error) {
	for {
		n, err := unix.Read(fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		return n, nil
	}
}

// sysShutdown ends both directions, which makes the socket readable (EOF)
// and so wakes its reader.
func sysShutdown(fd int) error { return unix.Shutdown(fd, unix.SHUT_RDWR) }
