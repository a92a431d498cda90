package httpstream

import (
	"bytes"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// rawRequest opens a TCP connection to the env and sends one request on
// it, without reading anything.
func (e *env) rawRequest(t *testing.T, method, target string, body []byte) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", e.hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", method, target, len(body))
	if _, err := nc.Write(append([]byte(req), body...)); err != nil {
		t.Fatal(err)
	}
	return nc
}

// TestStreamClientNeverReads: a client that stops reading its stream is
// cut off once a write waits longer than the write timeout, and the hub
// forgets it, as for a slow WebSocket client.
func TestStreamClientNeverReads(t *testing.T) {
	e := newEnv(t, Config{WriteTimeout: 100 * time.Millisecond}, nil)
	nc := e.rawRequest(t, "POST", pathHTTPStream, connectAndSubscribe(t, protocol.TypeJSON))
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	await(t, "the client to subscribe", func() bool { return e.hub.NumSubscriptions() == 1 })
	payload := []byte(`"` + strings.Repeat("x", 32<<10) + `"`)
	deadline := time.Now().Add(15 * time.Second)
	published := 0
	for e.hub.NumClients() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the client that never reads is still connected after %d publications of %d bytes", published, len(payload))
		}
		publish(t, e, "news", string(payload))
		published++
		time.Sleep(time.Millisecond)
	}
	t.Logf("closed after %d publications (%d KiB)", published, published*len(payload)>>10)
}

// TestIdleSSEMemory holds 2,000 idle SSE connections and bounds the
// memory each costs the server: the hub's client, the stream, net/http's
// buffers and goroutines.
func TestIdleSSEMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 connections")
	}
	const n = 2000
	e := newEnv(t, Config{}, nil)
	connect := urlEscape(string(commands(t, protocol.TypeJSON, &protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{}})))
	before := memInUse()
	conns := make([]net.Conn, 0, n)
	buf := make([]byte, 4096)
	for i := range n {
		nc := e.rawRequest(t, "GET", pathSSE+"?cf_connect="+connect, nil)
		conns = append(conns, nc)
		// Read up to the connect result's event, so the connection is
		// connected and idle when measured.
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		var got []byte
		for !bytes.Contains(got, []byte(`"connect":`)) || !bytes.HasSuffix(bytes.TrimRight(got, "\r\n0"), []byte("}")) {
			k, err := nc.Read(buf)
			if err != nil {
				t.Fatalf("connection %d: %v (read %q)", i, err, got)
			}
			got = append(got, buf[:k]...)
		}
	}
	await(t, "every client to connect", func() bool { return e.hub.NumClients() == n })
	after := memInUse()
	per := (int64(after) - int64(before)) / n
	t.Logf("%d idle SSE connections: %d bytes each (heap and stacks, server and client sides)", n, per)
	// The server's part is about one hub client, a net/http connection
	// (two goroutines, its read and write buffers) and the stream.
	if per > 64<<10 {
		t.Fatalf("%d bytes per idle SSE connection, want at most 64 KiB (about 28 KiB measured without the race detector)", per)
	}
	for _, nc := range conns {
		_ = nc.Close()
	}
	await(t, "the hub to forget the clients", func() bool { return e.hub.NumClients() == 0 })
}

// memInUse is the heap and stack memory in use after a collection.
func memInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}
