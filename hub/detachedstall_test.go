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

// pausingTransport stands for a client whose process gets the CPU only now
// and then, as the load tool's subscribers at twice the node's capacity:
// the first write the socket does not take at once (StartFrame) waits in
// FinishFrame for block, and meanwhile the client takes 16 KiB every pause
// (Delivered, as TCP's acknowledged bytes), or nothing when pause is 0.
type pausingTransport struct {
	block, pause time.Duration
	started      atomic.Bool
	delivered    atomic.Uint64
	pubs         atomic.Int64
	closed       chan uint32 // buffered 1
	gone         chan struct{}
	release      chan struct{} // closed: the waiting write fails, as at the write timeout
	closeOnce    sync.Once
}

func newPausingTransport(block, pause time.Duration) *pausingTransport {
	return &pausingTransport{block: block, pause: pause, closed: make(chan uint32, 1), gone: make(chan struct{}), release: make(chan struct{})}
}

func (t *pausingTransport) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *pausingTransport) WriteFrame(frame []byte) error {
	t.pubs.Add(int64(strings.Count(string(frame), `"pub"`)))
	return nil
}

// StartFrame takes every frame at once but the first with a publication.
func (t *pausingTransport) StartFrame(frame []byte) (bool, error) {
	if strings.Contains(string(frame), `"pub"`) && !t.started.Swap(true) {
		return false, nil
	}
	return true, t.WriteFrame(frame)
}

func (t *pausingTransport) FinishFrame(frame []byte) error {
	end := time.After(t.block)
	var tick <-chan time.Time
	if t.pause > 0 {
		tk := time.NewTicker(t.pause)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		select {
		case <-end:
			return t.WriteFrame(frame)
		case <-tick:
			t.delivered.Add(16 << 10)
		case <-t.gone: // a closed socket fails the write at once
			return errors.New("closed")
		case <-t.release:
			return errors.New("write timeout")
		}
	}
}

func (t *pausingTransport) Delivered() (uint64, bool) { return t.delivered.Load(), true }

func (t *pausingTransport) Close(code uint32, _ string) {
	t.closeOnce.Do(func() { close(t.gone) })
	select {
	case t.closed <- code:
	default:
	}
}

// TestDetachedWriteToPausingReaderIsNotSlow: with writes detached, a
// client whose queue is over the limit and whose write waits 2.5 s while it
// takes bytes every 900 ms (longer than the pool's 500 ms stall) is
// reading: it is not closed and gets everything. Before, its detached
// write was judged by the pool's 500 ms: in bench/overload.sh at twice the
// node's capacity, 3 of 500 reading subscribers were closed with 3008.
func TestDetachedWriteToPausingReaderIsNotSlow(t *testing.T) {
	t.Parallel()
	tr := newPausingTransport(2500*time.Millisecond, 900*time.Millisecond)
	h := slowReaderNodeDetaching(t, 128<<10, tr, nil, true)
	const n = 1500 // about 1.5 MB, for 1.5 s or more: over the limit, under 16 times it
	if code := publishPaced(t, h, n, tr.closed); code != 0 {
		t.Fatalf("a client that takes bytes every 900ms was closed with %d after %d publications", code, tr.pubs.Load())
	}
	awaitEvery(t, &tr.pubs, n, tr.closed, "a client that takes bytes every 900ms")
}

// TestDetachedWriteToIdleClientIsSlow: the same detached write, but the
// client takes nothing: it is closed with 3008 once its queue is over the
// limit and it has taken nothing for 2 s, long before its queue reaches
// 16 times the limit.
func TestDetachedWriteToIdleClientIsSlow(t *testing.T) {
	t.Parallel()
	tr := newPausingTransport(time.Minute, 0)
	cut := make(chan hub.BackpressureEvent, 1)
	h := slowReaderNodeDetaching(t, 128<<10, tr, cut, true)
	data := []byte(`{"pad":"` + strings.Repeat("x", 1000) + `"}`)
	start := time.Now()
	// A publication every 5 ms: 20 s of them stay under 16 times the limit.
	for i := 0; ; i++ {
		if i == 4000 {
			t.Fatal("a client that took nothing was not closed after 4000 publications")
		}
		if _, err := h.Publish(context.Background(), "s", data, hub.PublishOptions{}); err != nil {
			t.Fatalf("publish: %v", err)
		}
		select {
		case ev := <-cut:
			if ev.QueuedBytes >= 16*128<<10 {
				t.Fatalf("closed only at %d bytes queued, by the bound on readers slower than their channels", ev.QueuedBytes)
			}
			if d := time.Since(start); d < 2*time.Second {
				t.Fatalf("closed after %s, before its detached write had taken nothing for 2s", d)
			}
		case <-time.After(5 * time.Millisecond):
			continue
		}
		break
	}
	// The close follows the write in progress, which the transport's
	// write timeout ends.
	close(tr.release)
	if code := recv(t, tr.closed, "the close of the client that takes nothing"); code != uint32(protocol.DisconnectSlow) {
		t.Fatalf("a client that takes nothing was closed with %d, want %d", code, protocol.DisconnectSlow)
	}
}

// boundedPausingTransport is a pausingTransport whose writes have their
// own progress timeout, as websocket.write_timeout.
type boundedPausingTransport struct {
	*pausingTransport
	timeout time.Duration
}

func (t boundedPausingTransport) WriteProgressTimeout() time.Duration { return t.timeout }

// TestDetachedWriteFollowsTransportWriteTimeout: a client whose detached
// write waits 3.5 s and takes bytes after 3 s (past the hub's own 2 s
// stall) on a transport whose write timeout is 4 s is not closed and
// gets everything: the operator's timeout, not the hub's, says how long a
// client may take nothing. Before, the hub closed it with 3008 after 2 s:
// 1 of 500 reading subscribers of bench/overload.sh on CI, with
// websocket.write_timeout 3s because the load tool shares the cores.
func TestDetachedWriteFollowsTransportWriteTimeout(t *testing.T) {
	t.Parallel()
	tr := newPausingTransport(3500*time.Millisecond, 3*time.Second)
	h := slowReaderNodeDetaching(t, 256<<10, boundedPausingTransport{tr, 4 * time.Second}, nil, true)
	const n = 3000 // about 3 MB, for 3 s or more: over the limit past 2 s, under 16 times it
	if code := publishPaced(t, h, n, tr.closed); code != 0 {
		t.Fatalf("a client that takes bytes after 3s under a 4s write timeout was closed with %d after %d publications", code, tr.pubs.Load())
	}
	awaitEvery(t, &tr.pubs, n, tr.closed, "a client that takes bytes after 3s")
}
