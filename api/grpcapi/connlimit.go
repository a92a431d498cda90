package grpcapi

import (
	"net"
	"net/netip"
	"sync"
)

// perAddressListener closes, as soon as they are accepted, the
// connections of a client IP address that holds max of them already, so
// that one client cannot hold an unbounded number of connections (each
// with its streams) open. The map has an entry only for addresses that
// hold connections.
type perAddressListener struct {
	net.Listener
	max int

	mu     sync.Mutex
	byAddr map[netip.Addr]int
}

func limitPerAddress(ln net.Listener, max int) net.Listener {
	return &perAddressListener{Listener: ln, max: max, byAddr: make(map[netip.Addr]int)}
}

// Accept returns the next connection within its address's bound.
func (l *perAddressListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
		if err != nil {
			// Not an IP peer (a test's pipe, a Unix socket): not counted.
			return c, nil
		}
		addr := ap.Addr().Unmap().WithZone("")
		if !l.take(addr) {
			_ = c.Close()
			continue
		}
		return &countedConn{Conn: c, release: func() { l.release(addr) }}, nil
	}
}

func (l *perAddressListener) take(addr netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byAddr[addr] >= l.max {
		return false
	}
	l.byAddr[addr]++
	return true
}

func (l *perAddressListener) release(addr netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
}

// countedConn gives its place back on its first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
