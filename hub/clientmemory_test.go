package hub_test

import (
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// maxClientSize is the size of a hub.Client, measured when its state was
// split into structs embedded by value: a change that makes it larger
// must be a deliberate one (every idle connection pays for it). 384 until
// the kernel's count of what a client took decided slowness (writeQueue's
// delivered, deliveredAt, deliveryAsked): 24 bytes, 32 with the size
// class, under 1% of an idle connection's 4 KiB. 416 with one pointer to
// what few connections have (client_rare.go: the connection token's jti
// and iat for token revocation, the keys set in map channels for
// map.max_keys_per_client): the same 416-byte size class as 408, so an
// idle connection's heap did not grow.
const maxClientSize = 416

// maxIdleClientBytes bounds the heap an idle connected client holds in
// the hub (the Client, its id, timer and registrations, without the
// transport's own memory): about 1 KiB when measured, with room for
// the measurement's noise and none for a buffer or a goroutine.
const maxIdleClientBytes = 1536

// idleTransport is a transport that counts written frames and keeps
// nothing.
type idleTransport struct {
	mu     sync.Mutex
	frames int
	wrote  chan struct{}
}

func (t *idleTransport) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *idleTransport) WriteFrame([]byte) error {
	t.mu.Lock()
	t.frames++
	t.mu.Unlock()
	select {
	case t.wrote <- struct{}{}:
	default:
	}
	return nil
}

func (t *idleTransport) Close(uint32, string) {}

// TestIdleClientMemory: a connected client with nothing to do stays small.
func TestIdleClientMemory(t *testing.T) {
	if got := unsafe.Sizeof(hub.Client{}); got > maxClientSize {
		t.Fatalf("hub.Client is %d bytes, was %d", got, maxClientSize)
	}
	h := startNodeMem(t, hub.Config{Client: hub.ClientConfig{AllowAnonymousConnectWithoutToken: true, PingInterval: time.Hour}}).hub
	const n = 2000
	tr := &idleTransport{wrote: make(chan struct{}, n)}
	clients := make([]*hub.Client, 0, n)
	connect := []byte(`{"id":1,"connect":{}}`)
	// One client first, so that what the hub allocates once (pools,
	// maps' first buckets) is not counted.
	warm := h.NewClient(tr, "127.0.0.1:1")
	warm.HandleFrame(connect)
	recv(t, tr.wrote, "the first connect reply")

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		c := h.NewClient(tr, "127.0.0.1:1")
		if !c.HandleFrame(connect) {
			t.Fatal("connect refused")
		}
		clients = append(clients, c)
	}
	for range n {
		recv(t, tr.wrote, "connect replies")
	}
	if got := h.NumClients(); got != n+1 {
		t.Fatalf("%d clients connected, want %d", got, n+1)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("hub.Client %d bytes; an idle connected client holds about %d bytes of heap", unsafe.Sizeof(hub.Client{}), per)
	if per > maxIdleClientBytes {
		t.Fatalf("an idle client holds %d bytes, want at most %d", per, maxIdleClientBytes)
	}
	for _, c := range clients {
		c.HandleClose()
	}
	warm.HandleClose()
	runtime.KeepAlive(clients)
}
