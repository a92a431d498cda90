package nats

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testOptions returns options with a subject prefix no other test uses.
func testOptions(t testing.TB) Config {
	t.Helper()
	return Config{
		URL:           testenv.Require(t, "HERALD_TEST_NATS_URL"),
		Prefix:        "herald_t_" + randomToken(6),
		PingInterval:  time.Second,
		ReconnectWait: 20 * time.Millisecond,
		Logger:        testenv.Logger(),
	}
}

// startEngine makes and starts an engine delivering to h, closed when t
// ends.
func startEngine(t testing.TB, opts Config, h engine.Handler) *Engine {
	t.Helper()
	e := enginetest.NewEngine(t, func(ctx context.Context) (*Engine, error) { return New(ctx, opts) })
	enginetest.StartEngine(t, e, h)
	return e
}

// proxiedOptions routes an engine's connection through a proxy that the
// test can cut.
func proxiedOptions(t testing.TB, base Config) (Config, *proxy) {
	t.Helper()
	u, err := url.Parse(base.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.addr()
	base.URL = u.String()
	return base, p
}

// cutConnection cuts e's connection, which runs through px, and waits
// until e has reconnected; NATS subscribes again before anything else
// flows on the new connection. It returns how many connections it cut.
func cutConnection(t testing.TB, e *Engine, px *proxy) int {
	t.Helper()
	before := e.Stats().Reconnects
	n := px.cut()
	if n == 0 {
		t.Fatalf("node %s has no connection to cut", e.opts.NodeID)
	}
	enginetest.Eventually(t, 10*time.Second, func() string {
		if e.Stats().Reconnects == before {
			return "node " + e.opts.NodeID + " did not reconnect"
		}
		return ""
	})
	return n
}

// proxy forwards loopback TCP connections to a server and can cut them
// all, which both ends see as the network failing.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// newProxy starts a proxy to target that stops when t ends.
func newProxy(t testing.TB, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: make(map[net.Conn]struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		_ = ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[s] = struct{}{}, struct{}{}
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			_ = dst.Close()
			_ = src.Close()
			p.mu.Lock()
			delete(p.conns, dst)
			delete(p.conns, src)
			p.mu.Unlock()
		}
		p.wg.Go(func() { pipe(s, c) })
		p.wg.Go(func() { pipe(c, s) })
	}
}

// cut closes every forwarded connection; new ones are still accepted.
func (p *proxy) cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.conns) / 2
	for c := range p.conns {
		_ = c.Close()
	}
	return n
}
