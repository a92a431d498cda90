//go:build unix

package hub_test

import "syscall"

// setReceiveBuffer sets a socket's SO_RCVBUF.
func setReceiveBuffer(fd uintptr, size int) error {
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, size)
}
