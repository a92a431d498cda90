//go:build !unix

package loadgen

import "syscall"

// setRcvBuf leaves the receive buffer as it is where the socket option is
// not reachable the same way; the clients then take longer to fill.
func setRcvBuf(int) func(_, _ string, rc syscall.RawConn) error {
	return func(_, _ string, _ syscall.RawConn) error { return nil }
}
