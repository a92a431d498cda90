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

// ackingTransport stands for a socket whose buffer is full: its first
// write blocks for block. With taking, the client keeps taking bytes all
// the while (Delivered grows, as TCP's acknowledged bytes do when a full
// send buffer drains but has not yet woken its writer); without, it takes
// nothing, as a client that stopped reading.
type ackingTransport struct {
	block     time.Duration
	taking    bool
	blocked   atomic.Bool
	delivered atomic.Uint64
	pubs      atomic.Int64
	closed    chan uint32 // buffered 1
	gone      chan struct{}
	closeOnce sync.Once
}

func (t *ackingTransport) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *ackingTransport) WriteFrame(frame []byte) error {
	if !t.blocked.Swap(true) {
		tick := time.NewTicker(5 * time.Millisecond) // the client's pace
		defer tick.Stop()
		for end := time.Now().Add(t.block); time.Now().Before(end); {
			select {
			case <-tick.C:
			case <-t.gone: // a closed socket fails the write at once
				return errors.New("closed")
			}
			if t.taking {
				t.delivered.Add(4 << 10)
			}
		}
	}
	t.pubs.Add(int64(strings.Count(string(frame), `"pub"`)))
	return nil
}

func (t *ackingTransport) Delivered() (uint64, bool) { return t.delivered.Load(), true }

func (t *ackingTransport) Close(code uint32, _ string) {
	t.closeOnce.Do(func() { close(t.gone) })
	select {
	case t.closed <- code:
	default:
	}
}

// slowReaderNode is a node whose clients may queue queueMax bytes, with one
// client on tr subscribed to "s". Its hub's decisions to close a client as
// slow go to cut, which the hub acts on once the write in progress ends.
func slowReaderNode(t *testing.T, queueMax int, tr hub.Transport, cut chan<- hub.BackpressureEvent) *hub.Hub {
	t.Helper()
	return slowReaderNodeDetaching(t, queueMax, tr, cut, false)
}

// slowReaderNodeDetaching is slowReaderNode whose writers detach from a
// blocked write (the default) when detach, and wait on it when not
// (client.wait_on_blocked_writes).
func slowReaderNodeDetaching(t *testing.T, queueMax int, tr hub.Transport, cut chan<- hub.BackpressureEvent, detach bool) *hub.Hub {
	t.Helper()
	cfg := anonymousConfig(hub.ClientConfig{QueueMaxSize: queueMax, NodeQueueMaxSize: 64 << 20, WaitOnBlockedWrites: !detach})
	cfg.Handlers = hub.Handlers{OnBackpressure: func(_ *hub.Client, ev hub.BackpressureEvent) {
		if ev.Closed && cut != nil {
			select {
			case cut <- ev:
			default:
			}
		}
	}}
	h := startNodeMem(t, cfg).hub
	c := h.NewClient(tr, "127.0.0.1:1")
	c.HandleFrame([]byte(`{"id":1,"connect":{}}`))
	c.HandleFrame([]byte(`{"id":2,"subscribe":{"channel":"s"}}`))
	t.Cleanup(c.HandleClose)
	for h.NumSubscriptions() < 1 {
		time.Sleep(time.Millisecond) // the subscribe command runs on the client's goroutine
	}
	return h
}

// publishPaced publishes n 1 KB publications to "s", one a millisecond,
// and returns the close code if the client was closed meanwhile (0: not).
func publishPaced(t *testing.T, h *hub.Hub, n int, closed <-chan uint32) uint32 {
	t.Helper()
	data := []byte(`{"pad":"` + strings.Repeat("x", 1000) + `"}`)
	for range n {
		if _, err := h.Publish(context.Background(), "s", data, hub.PublishOptions{}); err != nil {
			t.Fatalf("publish: %v", err)
		}
		select {
		case code := <-closed:
			return code
		case <-time.After(time.Millisecond): // the publishing pace
		}
	}
	return 0
}

// TestBlockedWriteToTakingClientIsNotSlow: a write that waits far longer
// than the 500 ms stall while the client's queue is over the limit, but
// the transport says the client keeps taking bytes: the client is reading
// (its writer is only woken late), so it is not closed and gets everything.
// Before the hub asked the transport, it was closed with 3008.
func TestBlockedWriteToTakingClientIsNotSlow(t *testing.T) {
	t.Parallel()
	tr := &ackingTransport{block: 1500 * time.Millisecond, taking: true, closed: make(chan uint32, 1), gone: make(chan struct{})}
	h := slowReaderNode(t, 64<<10, tr, nil)
	const n = 600 // about 600 KB: over the limit, under 16 times it
	if code := publishPaced(t, h, n, tr.closed); code != 0 {
		t.Fatalf("a client that keeps taking bytes was closed with %d after %d publications", code, tr.pubs.Load())
	}
	awaitEvery(t, &tr.pubs, n, tr.closed, "a client that keeps taking bytes")
}

// awaitEvery waits until pubs counts n publications, failing if closed
// reports a close first or 20 s pass.
func awaitEvery(t *testing.T, pubs *atomic.Int64, n int64, closed <-chan uint32, who string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for pubs.Load() < n {
		select {
		case code := <-closed:
			t.Fatalf("%s was closed with %d after %d of %d publications", who, code, pubs.Load(), n)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s got %d of %d publications", who, pubs.Load(), n)
		}
	}
}

// TestBlockedWriteToIdleClientIsSlow: the same blocked write, but the
// transport says the client takes nothing: it has stopped reading and is
// closed with 3008 once its queue is over the limit and the write has
// waited 500 ms, long before its queue reaches 16 times the limit.
func TestBlockedWriteToIdleClientIsSlow(t *testing.T) {
	t.Parallel()
	// The blocked write fails after 3 s, as a transport's write timeout
	// ends it; the close follows it.
	tr := &ackingTransport{block: 3 * time.Second, closed: make(chan uint32, 1), gone: make(chan struct{})}
	cut := make(chan hub.BackpressureEvent, 1)
	h := slowReaderNode(t, 128<<10, tr, cut)
	data := []byte(`{"pad":"` + strings.Repeat("x", 1000) + `"}`)
	// At most 1.5 MB, under 16 times the limit: only the stall can close it.
	for i := 0; ; i++ {
		if i == 1500 {
			t.Fatal("a client that took nothing was not closed after 1500 publications")
		}
		if _, err := h.Publish(context.Background(), "s", data, hub.PublishOptions{}); err != nil {
			t.Fatalf("publish: %v", err)
		}
		select {
		case ev := <-cut:
			if ev.QueuedBytes >= 16*128<<10 {
				t.Fatalf("closed only at %d bytes queued, by the bound on readers slower than their channels", ev.QueuedBytes)
			}
		case <-time.After(time.Millisecond): // the publishing pace
			continue
		}
		break
	}
	if code := recv(t, tr.closed, "the close of the client that takes nothing"); code != uint32(protocol.DisconnectSlow) {
		t.Fatalf("a client that takes nothing was closed with %d, want %d", code, protocol.DisconnectSlow)
	}
}

// halfPaceTransport stands for a client on a link that takes half of what
// its channel publishes, whatever the machine's speed: a write of a frame
// completes once the channel has published twice the publications the
// client has taken with it, and the kernel's count of what the client took
// grows with every publication (DeliveryReporter), so that its writes,
// however long they wait, never look stalled. Paced by the publisher's
// count rather than by the clock, a busy machine slows both sides alike.
type halfPaceTransport struct {
	mu        sync.Mutex
	cond      *sync.Cond
	published int64       // publications made to the client's channel
	taken     int64       // publications written to the client
	released  bool        // the link no longer holds writes back
	closed    chan uint32 // buffered 1
}

func newHalfPaceTransport() *halfPaceTransport {
	t := &halfPaceTransport{closed: make(chan uint32, 1)}
	t.cond = sync.NewCond(&t.mu)
	return t
}

func (t *halfPaceTransport) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *halfPaceTransport) WriteFrame(frame []byte) error {
	n := int64(strings.Count(string(frame), `"pub"`))
	t.mu.Lock()
	defer t.mu.Unlock()
	for !t.released && t.published < 2*(t.taken+n) {
		t.cond.Wait()
	}
	t.taken += n
	return nil
}

// Delivered is half a publication's bytes for every publication made.
func (t *halfPaceTransport) Delivered() (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return uint64(t.published) * 512, true
}

// publishing counts a publication about to be made.
func (t *halfPaceTransport) publishing() {
	t.mu.Lock()
	t.published++
	t.mu.Unlock()
	t.cond.Broadcast()
}

// release lets every write complete at once.
func (t *halfPaceTransport) release() {
	t.mu.Lock()
	t.released = true
	t.mu.Unlock()
	t.cond.Broadcast()
}

func (t *halfPaceTransport) Close(code uint32, _ string) {
	t.release()
	select {
	case t.closed <- code:
	default:
	}
}

// TestReaderSlowerThanItsChannelsIsClosed: a client reads, every write
// completing, but it takes half of what its channel publishes. Its queue
// would grow without end: it is closed with 3008 once the queue passes 16
// times client.queue_max_size, whatever the node's state, and by that
// bound, not by the stall of a write.
//
// The client used to be paced by the clock (100 ms a frame, about 630
// publications a second) against a publisher paced by the clock too (one
// publication a millisecond), so that it was slower than its channel only
// where the publisher made its 1,000 a second: under -race on a busy
// machine the publisher made 450 to 560 a second, the client kept up, its
// queue stayed small, and the test failed with "closed with 0".
func TestReaderSlowerThanItsChannelsIsClosed(t *testing.T) {
	t.Parallel()
	const limit = 16 << 10
	tr := newHalfPaceTransport()
	cut := make(chan hub.BackpressureEvent, 1)
	h := slowReaderNode(t, limit, tr, cut)
	data := []byte(`{"pad":"` + strings.Repeat("x", 1000) + `"}`)
	// The queue reaches half of what was published each time the client
	// takes what it was handed: past 16 times the limit (about 260
	// publications of 1 KB) within 1,100 publications.
	var ev hub.BackpressureEvent
	for i := 0; ; i++ {
		if i == 2000 {
			t.Fatalf("a client taking half of what its channel publishes was not closed after %d publications", i)
		}
		tr.publishing()
		if _, err := h.Publish(context.Background(), "s", data, hub.PublishOptions{}); err != nil {
			t.Fatalf("publish: %v", err)
		}
		select {
		case ev = <-cut:
		default:
			continue
		}
		break
	}
	if ev.QueuedBytes <= 16*limit {
		t.Fatalf("closed at %d bytes queued, not by the bound of 16 times the limit (%d)", ev.QueuedBytes, 16*limit)
	}
	tr.release() // the writes handed over before the close end at once
	if code := recv(t, tr.closed, "the close of the client slower than its channel"); code != uint32(protocol.DisconnectSlow) {
		t.Fatalf("a client reading slower than its channel publishes was closed with %d, want %d", code, protocol.DisconnectSlow)
	}
}
