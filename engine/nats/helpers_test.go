package nats

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testOptions returns options with a subject prefix no other test uses.
func testOptions(t testing.TB) Options {
	t.Helper()
	return Options{
		URL:           testenv.Require(t, "HERALD_TEST_NATS_URL"),
		Prefix:        "herald_t_" + randomToken(6),
		PingInterval:  time.Second,
		ReconnectWait: 20 * time.Millisecond,
		Logger:        testenv.Logger(),
	}
}

// startEngine makes and starts an engine delivering to h, closed when t
// ends.
func startEngine(t testing.TB, opts Options, h engine.Handler) *Engine {
	t.Helper()
	e := enginetest.NewEngine(t, func(ctx context.Context) (*Engine, error) { return New(ctx, opts) })
	enginetest.StartEngine(t, e, h)
	return e
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
