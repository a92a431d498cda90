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
	perAddr *guard.AddrCounter // nil: no bound
	conns   *connRegistry
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
	l := &listener{Listener: ln, conns: conns}
	if maxPerAddr >= 0 {
		c := guard.NewAddrCounter(maxPerAddr)
		l.perAddr = &c
	}
	return l
}

// Accept returns the next connection within its address's bound.
func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		wc := &watchConn{Conn: c, key: connKey{c.RemoteAddr().String(), c.LocalAddr().String()}, l: l}
		if ap, err := netip.ParseAddrPort(wc.key.remote); err == nil && l.perAddr != nil {
			// An address that is not IP (a Unix socket) is not counted;
			// an IPv6 one counts by its /64, as the WebSocket admission
			// counts it, since one host usually holds a whole /64.
			t, ok := l.perAddr.Take(ap.Addr())
			if !ok {
				_ = c.Close()
				continue
			}
			wc.ticket = t
		}
		l.conns.add(wc)
		return wc, nil
	}
}

// release gives back wc's place, once it closed.
func (l *listener) release(wc *watchConn) {
	l.conns.remove(wc)
	if wc.ticket != nil {
		wc.ticket.Release()
	}
}

// watchConn is an accepted connection: it counts what is written to it
// and gives its address's place back on its first Close.
type watchConn struct {
	net.Conn
	key     connKey
	ticket  guard.Ticket // its address's place; nil when not counted
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
