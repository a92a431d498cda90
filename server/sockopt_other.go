//go:build !linux && !darwin

package server

import "net"

// lowatListener accepts as its listener does: TCP_NOTSENT_LOWAT
// (http.tcp_notsent_lowat) is set only on Linux and macOS.
type lowatListener struct {
	net.Listener
	n int
}
