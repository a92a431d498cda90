package grpcapi

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/heraldhq/herald/transport/guard"
)

// listener wraps the server's listener. It closes, as soon as they are
// accepted, the connections of a client IP address (an IPv6 one by its
// /64) that holds maxPerAddr
// of them already (maxPerAddr < 0: no bound), so that one client cannot
// hold an unbounded number of connections, each with its streams, open.
// Every connection it returns counts the bytes written to it for the
// send watch (sendwatch.go), which finds it by its addresses.
type listener struct {
	net.Listener
	maxPerAddr int
	conns      *connRegistry

	mu     sync.Mutex
	byAddr map[netip.Addr]int // connections per address, only addresses holding some
}

// connRegistry holds the connections the listeners of a Server accepted
// until the stats handler takes them, by their two ends.
type connRegistry struct {
	mu    sync.Mutex
	conns map[connKey]*watchConn
}

func newConnRegistry() *connRegistry { return &connRegistry{conns: make(map[connKey]*watchConn)} }

func (r *connRegistry) add(wc *watchConn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conns[wc.key] = wc
}

// take returns the connection with key, once; nil when unknown.
func (r *connRegistry) take(key connKey) *watchConn {
	r.mu.Lock()
	defer r.mu.Unlock()
	wc := r.conns[key]
	delete(r.conns, key)
	return wc
}

func (r *connRegistry) remove(wc *watchConn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns[wc.key] == wc {
		delete(r.conns, wc.key)
	}
}

// connKey names a live TCP connection by its two ends, which is what
// grpc-go's stats handler is told of it.
type connKey struct{ remote, local string }

func newListener(ln net.Listener, maxPerAddr int, conns *connRegistry) *listener {
	return &listener{Listener: ln, maxPerAddr: maxPerAddr, conns: conns, byAddr: make(map[netip.Addr]int)}
}

// Accept returns the next connection within its address's bound.
func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		wc := &watchConn{Conn: c, key: connKey{c.RemoteAddr().String(), c.LocalAddr().String()}, l: l}
		if ap, err := netip.ParseAddrPort(wc.key.remote); err == nil && l.maxPerAddr >= 0 {
			// An address that is not IP (a Unix socket) is not counted;
			// an IPv6 one counts by its /64, as the WebSocket admission
			// counts it, since one host usually holds a whole /64.
			wc.addr = guard.AddrKey(ap.Addr())
			wc.counted = true
		}
		if !l.count(wc) {
			_ = c.Close()
			continue
		}
		l.conns.add(wc)
		return wc, nil
	}
}

// count counts wc against its address; false when the address holds its
// share already.
func (l *listener) count(wc *watchConn) bool {
	if !wc.counted {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byAddr[wc.addr] >= l.maxPerAddr {
		return false
	}
	l.byAddr[wc.addr]++
	return true
}

// release gives back wc's place, once it closed.
func (l *listener) release(wc *watchConn) {
	l.conns.remove(wc)
	if !wc.counted {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byAddr[wc.addr]--; l.byAddr[wc.addr] <= 0 {
		delete(l.byAddr, wc.addr)
	}
}

// watchConn is an accepted connection: it counts what is written to it
// and gives its address's place back on its first Close.
type watchConn struct {
	net.Conn
	key     connKey
	addr    netip.Addr
	counted bool
	l       *listener
	written atomic.Int64
	once    sync.Once
}

func (c *watchConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

func (c *watchConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}
