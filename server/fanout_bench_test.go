package server

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/websocket"
)

// BenchmarkFanoutLoopback is a node's whole cost of a delivered copy on
// real sockets: 500 WebSocket subscribers of one channel on loopback (the
// side-by-side benchmark's shape, docs/benchmarks.md), one 128-byte
// publication per op through the hub, and the op ends when every
// subscriber has read its copy. The subscribers only count what they
// read (no decoding), in this process.
//
//	go test -run '^$' -bench FanoutLoopback -benchtime 2000x ./server
//
// cpu-ns/copy is the process's CPU time (user + system, the subscribers'
// reads included) per delivered copy: the figure to compare before and
// after a change of the delivery path, with -cpuprofile for where it
// goes. user-ns/copy is its user part, the process's own code without the
// kernel's, which varies less between runs. bench/floor's
// BenchmarkLoopbackWrite is the same socket work with nothing else (a
// pre-encoded frame written to each connection).
// "coalesce-off" writes every copy at once; the default lets the node's
// adaptive interval merge copies when writes take much of its CPUs,
// which back-to-back publications can make it do.
func BenchmarkFanoutLoopback(b *testing.B) {
	for _, bc := range []struct {
		name string
		off  bool
	}{{"coalesce-off", true}, {"default", false}} {
		b.Run(bc.name, func(b *testing.B) {
			benchFanoutLoopback(b, 500, bc.off)
		})
	}
}

func benchFanoutLoopback(b *testing.B, subscribers int, coalesceOff bool) {
	cfg := config.Default()
	cfg.WebSocket.Rate = -1 // every subscriber comes from 127.0.0.1
	cfg.Client.Insecure = true
	cfg.Client.WriteCoalesceOff = coalesceOff
	cfg.Channel.WithoutNamespace.AllowSubscribeForClient = true
	s := startServer(b, cfg)
	b.Cleanup(func() { shutdownBench(s) })

	const channel = "bench"
	var (
		copies  atomic.Int64 // copies read by all subscribers
		target  atomic.Int64 // the count that ends the current op
		arrived = make(chan struct{}, 1)
		readers sync.WaitGroup
		conns   []net.Conn
	)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		readers.Wait()
	}()
	url := "ws://" + s.Addr() + WebSocketPath
	d := ws.Dialer{Protocols: []string{websocket.SubprotocolJSON}}
	hello := []byte(`{"id":1,"connect":{}}` + "\n" + `{"id":2,"subscribe":{"channel":"` + channel + `"}}`)
	for range subscribers {
		nc, err := subscribe(d, url, hello)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, nc)
		readers.Add(1)
		go func() {
			defer readers.Done()
			countPushes(nc, func(n int) {
				if copies.Add(int64(n)) >= target.Load() {
					select {
					case arrived <- struct{}{}:
					default:
					}
				}
			})
		}()
	}

	data := []byte(`"` + strings.Repeat("x", 126) + `"`) // 128 bytes, as herald-bench's payload
	h := s.Hub()
	ctx := context.Background()
	b.ResetTimer()
	cpu, user := processCPU(), processUserCPU()
	for i := range b.N {
		want := int64(i+1) * int64(subscribers)
		target.Store(want)
		if _, err := h.Publish(ctx, channel, data, hub.PublishOptions{}); err != nil {
			b.Fatal(err)
		}
		for copies.Load() < want {
			select {
			case <-arrived:
			case <-time.After(10 * time.Second):
				b.Fatalf("op %d: %d of %d copies read after 10 s", i, copies.Load()-want+int64(subscribers), subscribers)
			}
		}
	}
	b.StopTimer()
	delivered := float64(b.N * subscribers)
	b.ReportMetric(float64(processCPU()-cpu)/delivered, "cpu-ns/copy")
	b.ReportMetric(float64(processUserCPU()-user)/delivered, "user-ns/copy")
}

// subscribe dials the node, sends hello (connect and subscribe in one
// frame) and reads until both replies came.
func subscribe(d ws.Dialer, url string, hello []byte) (net.Conn, error) {
	nc, br, _, err := d.Dial(context.Background(), url)
	if err != nil {
		return nil, err
	}
	if br != nil {
		ws.PutReader(br) // the server says nothing before the connect reply
	}
	if err := wsutil.WriteClientText(nc, hello); err != nil {
		nc.Close()
		return nil, err
	}
	var got []byte
	for !bytes.Contains(got, []byte(`"id":2`)) {
		msg, err := wsutil.ReadServerText(nc)
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("subscribe: %w", err)
		}
		got = append(got, msg...)
	}
	if bytes.Contains(got, []byte(`"error"`)) {
		nc.Close()
		return nil, fmt.Errorf("subscribe refused: %s", got)
	}
	return nc, nil
}

// countPushes reads nc until it fails and reports each read's count of
// publication pushes, found by their "pub" key: no decoding, so the
// readers cost the node's process little beyond the socket reads. A
// marker split between two reads is counted once, in the second.
func countPushes(nc net.Conn, report func(int)) {
	marker := []byte(`"pub":{`)
	buf := make([]byte, 64<<10)
	keep := 0
	for {
		n, err := nc.Read(buf[keep:])
		if err != nil {
			return
		}
		chunk := buf[:keep+n]
		if c := bytes.Count(chunk, marker); c > 0 {
			report(c)
		}
		// Keep the tail that may hold the start of a split marker.
		keep = min(len(marker)-1, len(chunk))
		if i := bytes.LastIndex(chunk, marker); i >= 0 && i+len(marker) > len(chunk)-keep {
			keep = len(chunk) - (i + len(marker)) // the marker itself was counted
		}
		copy(buf, chunk[len(chunk)-keep:])
	}
}
