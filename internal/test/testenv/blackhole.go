package testenv

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy is a loopback TCP proxy to one target that tests use to make the
// network fail the way it does in production, which a killed backend or a
// stopped server does not imitate:
//
//   - Blackhole stops forwarding in both directions without closing
//     anything, as a NAT gateway or cloud load balancer does when it
//     forgets a flow, or a network partition: neither end hears a FIN or
//     an RST, writes are acknowledged by the proxy's kernel until its
//     buffers fill, and reads wait for ever. Only a deadline or a
//     keepalive on the client tells it that the peer is gone.
//   - Cut resets every open connection (RST), as a restarting middlebox
//     does: both ends see the error at once.
//   - Restore lets new connections through again. Connections that were
//     black-holed stay so, as a flow a NAT forgot never comes back.
//
// The proxy closes when the test ends.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	holed bool // connections accepted now are black-holed at birth
	conns map[*proxyConn]struct{}
	done  bool
	// accepted counts connections ever accepted: a client that noticed a
	// dead connection shows up here as a new attempt.
	accepted int

	wg sync.WaitGroup
}

// proxyConn is one proxied connection: the accepted client side and, once
// dialled, the target side.
type proxyConn struct {
	client net.Conn
	// mu guards server, which is set once dialled, against a concurrent
	// close.
	mu     sync.Mutex
	server net.Conn
	closed bool
	// holed is closed when the connection is black-holed; killed when it is
	// cut or the proxy closes, which ends its goroutines.
	holed     chan struct{}
	holeOnce  sync.Once
	killed    chan struct{}
	killOnce  sync.Once
	closeOnce sync.Once
}

// NewProxy starts a proxy on 127.0.0.1 forwarding to target (host:port)
// and closes it when t ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy to %s: %v", target, err)
	}
	p := &Proxy{ln: ln, target: target, conns: make(map[*proxyConn]struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's address, host:port, to put in place of the target's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Blackhole stops forwarding on every open connection and on every
// connection accepted until Restore, without closing any.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holed = true
	for c := range p.conns {
		c.hole()
	}
}

// Restore makes connections accepted from now on forward to the target.
// Connections black-holed before stay black-holed until Cut or Close.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holed = false
}

// Cut resets every open connection, black-holed or not: each end gets an
// RST. It does not change whether new connections are black-holed.
func (p *Proxy) Cut() {
	p.mu.Lock()
	conns := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.kill(true)
	}
}

// Conns returns the number of open connections, black-holed ones included.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Accepted returns the number of connections accepted since the proxy
// started: a client that has given up on a black-holed connection shows
// up here as a new one.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Close stops accepting, closes every connection and waits for the
// proxy's goroutines. Closing twice is harmless.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.done = true
	conns := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	for _, c := range conns {
		c.kill(false)
	}
	p.wg.Wait()
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		c := &proxyConn{client: client, holed: make(chan struct{}), killed: make(chan struct{})}
		p.mu.Lock()
		if p.done {
			p.mu.Unlock()
			_ = client.Close()
			return
		}
		p.conns[c] = struct{}{}
		p.accepted++
		if p.holed {
			c.hole()
		}
		p.mu.Unlock()
		p.wg.Go(func() {
			p.serve(c)
			p.mu.Lock()
			delete(p.conns, c)
			p.mu.Unlock()
		})
	}
}

// serve dials the target and pumps both ways until the connection ends.
// A connection black-holed at birth never dials: the client's handshake
// with the proxy succeeds and nothing more happens, as behind a NAT that
// drops the flow's packets.
func (p *Proxy) serve(c *proxyConn) {
	defer c.close(false)
	select {
	case <-c.holed:
		<-c.killed
		return
	default:
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	c.mu.Lock()
	closed := c.closed
	c.server = server
	c.mu.Unlock()
	if closed {
		_ = server.Close()
		return
	}
	var pumps sync.WaitGroup
	pumps.Go(func() { c.pump(server, c.client) })
	pumps.Go(func() { c.pump(c.client, server) })
	pumps.Wait()
}

// pump copies from src to dst. Once the connection is black-holed it
// stops reading, so that the sender's kernel buffers fill as they would
// with no acknowledgements coming back, and it never passes on an end of
// stream: a black hole tells neither side anything. Bytes read but not yet
// written when the hole opens are dropped.
func (c *proxyConn) pump(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		if c.isHoled() {
			<-c.killed
			return
		}
		n, err := src.Read(buf)
		if c.isHoled() {
			<-c.killed
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				c.kill(false)
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				// Pass the half close on, as a working network does.
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
					return
				}
			}
			c.kill(false)
			return
		}
	}
}

func (c *proxyConn) isHoled() bool {
	select {
	case <-c.holed:
		return true
	default:
		return false
	}
}

func (c *proxyConn) hole() { c.holeOnce.Do(func() { close(c.holed) }) }

// kill ends the connection; with reset, both ends get an RST instead of a
// FIN.
func (c *proxyConn) kill(reset bool) {
	c.killOnce.Do(func() { close(c.killed) })
	c.close(reset)
}

func (c *proxyConn) close(reset bool) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		server := c.server
		c.mu.Unlock()
		for _, conn := range []net.Conn{c.client, server} {
			if conn == nil {
				continue
			}
			if tc, ok := conn.(*net.TCPConn); ok && reset {
				_ = tc.SetLinger(0) // close sends RST
			}
			_ = conn.Close()
		}
	})
}
