package hub_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// laggingTransport stands for a client that is behind: every write waits
// block for the socket (taking bytes all the while when taking, as a
// client that reads but slower than it is sent to), and a frame that holds
// a ping is answered with a pong once it is written, as a client answers a
// ping when it reads it.
type laggingTransport struct {
	block     time.Duration
	taking    bool
	client    atomic.Pointer[hub.Client]
	delivered atomic.Uint64
	pongs     atomic.Int64
	closed    chan uint32 // buffered 1
	gone      chan struct{}
	closeOnce sync.Once
}

func newLaggingTransport(block time.Duration, taking bool) *laggingTransport {
	return &laggingTransport{block: block, taking: taking, closed: make(chan uint32, 1), gone: make(chan struct{})}
}

func (t *laggingTransport) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *laggingTransport) WriteFrame(frame []byte) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(t.block); time.Now().Before(end); {
		select {
		case <-tick.C:
		case <-t.gone:
			return errors.New("closed")
		}
		if t.taking {
			t.delivered.Add(4 << 10)
		}
	}
	for line := range strings.SplitSeq(string(frame), "\n") {
		if line == "{}" {
			t.pongs.Add(1)
			go t.client.Load().HandleFrame([]byte(`{}`))
		}
	}
	return nil
}

func (t *laggingTransport) Delivered() (uint64, bool) { return t.delivered.Load(), true }

func (t *laggingTransport) Close(code uint32, _ string) {
	t.closeOnce.Do(func() { close(t.gone) })
	select {
	case t.closed <- code:
	default:
	}
}

// laggingClient connects a client on tr to a node that pings every 600 ms
// and waits 200 ms for the pong, subscribed to "s", and publishes to "s"
// every 20 ms for d, so that the client's queue never empties while each
// write waits; it returns the close code, 0 if the client stayed.
func laggingClient(t *testing.T, tr *laggingTransport, d time.Duration) uint32 {
	t.Helper()
	h := startNodeMem(t, anonymousConfig(hub.ClientConfig{PingInterval: 600 * time.Millisecond, PongTimeout: 200 * time.Millisecond})).hub
	c := h.NewClient(tr, "127.0.0.1:1")
	tr.client.Store(c)
	c.HandleFrame([]byte(`{"id":1,"connect":{}}`))
	c.HandleFrame([]byte(`{"id":2,"subscribe":{"channel":"s"}}`))
	t.Cleanup(c.HandleClose)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(d); time.Now().Before(end); {
		select {
		case code := <-tr.closed:
			return code
		case <-tick.C:
		}
		if _, err := h.Publish(context.Background(), "s", []byte(`{"n":1}`), hub.PublishOptions{}); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	return 0
}

// TestPongOfClientBehindIsAwaited: a client that reads, but whose every
// write waits longer than the pong timeout, gets its pings late and
// answers them late; it is not closed for "no pong" (3012 before: the
// deadline ran from the ping's enqueueing).
func TestPongOfClientBehindIsAwaited(t *testing.T) {
	t.Parallel()
	tr := newLaggingTransport(500*time.Millisecond, true)
	if code := laggingClient(t, tr, 3*time.Second); code != 0 {
		t.Fatalf("a client that reads, behind, was closed with %d", code)
	}
	if n := tr.pongs.Load(); n < 2 {
		t.Fatalf("%d pongs in 3s with a 600ms ping interval", n)
	}
}

// TestPongOfClientTakingNothingIsDue: a client whose writes wait and that
// takes nothing is still closed for no pong.
func TestPongOfClientTakingNothingIsDue(t *testing.T) {
	t.Parallel()
	tr := newLaggingTransport(time.Second, false)
	if code := laggingClient(t, tr, 5*time.Second); code != uint32(protocol.DisconnectNoPong) {
		t.Fatalf("a client that takes nothing: closed with %d, want %d", code, protocol.DisconnectNoPong)
	}
}
