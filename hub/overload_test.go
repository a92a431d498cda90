package hub_test

import (
	"bytes"
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

// cpuTransport stands for a socket that drains: each write costs CPU in
// proportion to its size, as the kernel's TCP work does on loopback, and
// completes; or, with perFrame, it stands for a client on a slow link that
// reads steadily: every write completes, each after perFrame. It counts the
// publications it received and records its close.
type cpuTransport struct {
	perFrame time.Duration
	pubs     atomic.Int64
	closed   chan uint32 // buffered 1
}

func (t *cpuTransport) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *cpuTransport) WriteFrame(frame []byte) error {
	if t.perFrame > 0 {
		time.Sleep(t.perFrame) // the link's pace, not a wait for an event
	} else {
		spin(10*time.Microsecond + time.Duration(len(frame))*2*time.Nanosecond)
	}
	t.pubs.Add(int64(bytes.Count(frame, []byte(`"pub"`))))
	return nil
}

func (t *cpuTransport) Close(code uint32, _ string) {
	select {
	case t.closed <- code:
	default:
	}
}

// spin burns CPU for d.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// stuckTransport stands for a client that does not read: once its socket
// buffer is full, a write blocks until the connection is closed or its
// write timeout (a second, as the WebSocket transport's default) passes.
type stuckTransport struct {
	writes int
	done   chan struct{}
	once   sync.Once
	closed chan uint32 // buffered 1
}

func (t *stuckTransport) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *stuckTransport) WriteFrame([]byte) error {
	t.writes++ // only ever one writer at a time
	if t.writes <= 2 {
		return nil // the connect and subscribe replies fit
	}
	select {
	case <-t.done:
		return errors.New("closed")
	case <-time.After(time.Second):
		return errors.New("write timeout")
	}
}

func (t *stuckTransport) Close(code uint32, _ string) {
	t.once.Do(func() { close(t.done) })
	select {
	case t.closed <- code:
	default:
	}
}

// TestOverloadSpareReadingClients overloads a node: publishers publish as
// fast as they can to a channel whose subscribers' writes cost CPU, so
// delivery falls behind and the write queues pass client.queue_max_size.
// No subscriber whose writes complete is closed: the node sheds
// publishing (error 111) instead, while the client that does not read is
// closed with 3008. When the load ends every reading subscriber gets every
// accepted publication and the node's queues empty.
func TestOverloadSpareReadingClients(t *testing.T) {
	t.Parallel()
	h := startNodeMem(t, anonymousConfig(hub.ClientConfig{QueueMaxSize: 32 << 10, NodeQueueMaxSize: 2 << 20})).hub
	ctx := context.Background()
	connect := []byte(`{"id":1,"connect":{}}`)
	subscribe := []byte(`{"id":2,"subscribe":{"channel":"s"}}`)

	const readers = 100
	trs := make([]*cpuTransport, readers)
	for i := range trs {
		trs[i] = &cpuTransport{closed: make(chan uint32, 1)}
		c := h.NewClient(trs[i], "127.0.0.1:1")
		c.HandleFrame(connect)
		c.HandleFrame(subscribe)
		t.Cleanup(c.HandleClose)
	}
	stuck := &stuckTransport{done: make(chan struct{}), closed: make(chan uint32, 1)}
	sc := h.NewClient(stuck, "127.0.0.1:1")
	sc.HandleFrame(connect)
	sc.HandleFrame(subscribe)
	t.Cleanup(sc.HandleClose)
	for h.NumSubscriptions() < readers+1 {
		time.Sleep(time.Millisecond) // the subscribe commands run on the clients' goroutines
	}

	// Overload for two seconds from four publishers.
	data := []byte(`{"pad":"` + strings.Repeat("x", 1000) + `"}`)
	var accepted, shed atomic.Int64
	var maxQueued atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(2 * time.Second)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				_, err := h.Publish(ctx, "s", data, hub.PublishOptions{})
				var he *hub.Error
				switch {
				case err == nil:
					accepted.Add(1)
				case errors.As(err, &he) && he.Code == 111 && he.Temporary:
					shed.Add(1)
					time.Sleep(time.Millisecond) // a client backs off
				default:
					t.Errorf("publish: %v", err)
					return
				}
				if q := h.QueuedBytes(); q > maxQueued.Load() {
					maxQueued.Store(q)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("overload: %d publications accepted, %d shed; node queues peaked at %d bytes", accepted.Load(), shed.Load(), maxQueued.Load())
	if shed.Load() == 0 || maxQueued.Load() <= 32<<10 {
		t.Fatalf("the node kept up (%d shed, queues peaked at %d bytes): not an overload", shed.Load(), maxQueued.Load())
	}

	// The client that does not read is closed: as slow (3008) when its
	// queue passed the limit while a write to it was blocked for 500ms, or
	// by the write timeout (3009) if nothing was queued for it meanwhile.
	if code := recv(t, stuck.closed, "the close of the client that does not read"); code != 3008 && code != 3009 {
		t.Fatalf("the client that does not read was closed with %d, want 3008 or 3009", code)
	}
	// Every reading client gets every accepted publication, and the
	// node's queues empty: it recovered.
	want := accepted.Load()
	deadline := time.Now().Add(20 * time.Second)
	for i, tr := range trs {
		for tr.pubs.Load() < want {
			select {
			case code := <-tr.closed:
				t.Fatalf("reading client %d closed with %d after %d of %d publications", i, code, tr.pubs.Load(), want)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("reading client %d got %d of %d publications 20s after the load", i, tr.pubs.Load(), want)
			}
			time.Sleep(time.Millisecond)
		}
		if got := tr.pubs.Load(); got != want {
			t.Fatalf("reading client %d got %d publications, want %d", i, got, want)
		}
	}
	for _, tr := range trs {
		select {
		case code := <-tr.closed:
			t.Fatalf("a reading client was closed with %d", code)
		default:
		}
	}
	// The writers hand what they wrote back to the node's count when
	// they have nothing left to write, which can be just after the
	// clients read it.
	for q := h.QueuedBytes(); q != 0; q = h.QueuedBytes() {
		if time.Now().After(deadline) {
			t.Fatalf("after the load, %d bytes still queued", q)
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := h.Publish(ctx, "s", data, hub.PublishOptions{}); err != nil {
		t.Fatalf("publish after the load: %v", err)
	}
}

// TestSlowReaderBehindIsNotClosed: a client that reads steadily but is far
// behind holds a queue of many frames over client.queue_max_size; each of
// its writes completes in 100 ms. It is reading, so it is not closed as
// slow, however long the whole queue takes to write (it used to be, once a
// flush of many frames had lasted 500 ms), and it gets every publication.
// Its queue peaks at about 4 times the limit, under the 16 times at which
// a client that reads slower than its channels publish is closed
// (TestReaderSlowerThanItsChannelsIsClosed).
func TestSlowReaderBehindIsNotClosed(t *testing.T) {
	t.Parallel()
	tr := &cpuTransport{perFrame: 100 * time.Millisecond, closed: make(chan uint32, 1)}
	h := slowReaderNode(t, 128<<10, tr, nil)
	// 1.5 s of publications, 1 MB/s against the 640 KiB/s the client
	// takes: the queue passes 128 KiB and grows while frames of 64 KiB go
	// out, a flush lasting ever longer.
	const n = 1500
	if code := publishPaced(t, h, n, tr.closed); code != 0 {
		t.Fatalf("the client that reads steadily was closed with %d after %d publications", code, tr.pubs.Load())
	}
	awaitEvery(t, &tr.pubs, n, tr.closed, "the client that reads steadily")
}
