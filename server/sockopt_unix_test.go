//go:build linux || darwin

package server

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLowatListenerSetsEveryConnection: every accepted connection gets
// http.tcp_notsent_lowat (Linux does not pass a listening socket's value
// on to its connections).
func TestLowatListenerSetsEveryConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := lowatListener{ln, 48 << 10}
	defer l.Close()
	for range 2 {
		dialed := make(chan net.Conn, 1)
		go func() {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Error(err)
			}
			dialed <- c
		}()
		c, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		rc, err := c.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var got int
		var gerr error
		if err := rc.Control(func(fd uintptr) {
			got, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT)
		}); err != nil || gerr != nil {
			t.Fatal(err, gerr)
		}
		if got != 48<<10 {
			t.Fatalf("accepted connection has TCP_NOTSENT_LOWAT %d, want %d", got, 48<<10)
		}
		c.Close()
		if d := <-dialed; d != nil {
			d.Close()
		}
	}
}
