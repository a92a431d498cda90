package websocket

import (
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsflate"
)

// publication500 is a typical chat publication as the hub frames it,
// about 500 bytes of JSON.
var publication500 = []byte(`{"push":{"channel":"chat:room-42","pub":{"data":{"id":"msg-7f3a9c2e-51d4-4b8e-9a0f-2c6d8e1b4f70","type":"message","user":{"id":"u-18342","name":"Ada Lovelace","avatar":"https://cdn.example.com/avatars/18342.png"},"text":"Has anyone looked at the numbers for the analytical engine benchmark? The last staging run looked a lot faster than the one before.","sent_at":"2026-11-23T23:14:31.512Z","reply_to":"msg-1b2c3d4e","reactions":{"thumbs_up":3,"eyes":1}},"offset":184467,"info":{"user":"u-18342","client":"c-0a1b2c3d"}}}}`)

// countingConn counts the bytes the server writes to the socket.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// BenchmarkCompressionWrite is the hub's write of one 500-byte JSON
// publication to a client that reads fast, with and without
// permessage-deflate (level 1, no context takeover). wire-bytes/op is what
// went to the socket per message, frame header included; ns/op is the
// CPU of the write path (compression and the syscall).
func BenchmarkCompressionWrite(b *testing.B) {
	for _, compress := range []bool{false, true} {
		name := "off"
		if compress {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			if len(publication500) < 450 || len(publication500) > 550 {
				b.Fatalf("publication is %d bytes, want about 500", len(publication500))
			}
			var wire atomic.Int64
			conns := make(chan *Conn, 1)
			accept := acceptConns(conns)
			url := benchServer(b, Config{Compression: compress}, func(c *Conn, r *http.Request) Receiver {
				c.nc = countingConn{Conn: c.nc, n: &wire}
				return accept(c, r)
			})
			d := ws.Dialer{Extensions: []httphead.Option{wsflate.DefaultParameters.Option()}}
			_, c := dialDiscard(b, d, url, conns)
			if c.deflate != compress {
				b.Fatalf("compression negotiated %v, want %v", c.deflate, compress)
			}
			// One write first, so that the pool's compressor is made
			// outside the measurement.
			if err := c.WriteFrame(publication500); err != nil {
				b.Fatal(err)
			}
			wire.Store(0)
			b.ReportAllocs()
			b.SetBytes(int64(len(publication500)))
			for b.Loop() {
				if err := c.WriteFrame(publication500); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(wire.Load())/float64(b.N), "wire-bytes/op")
		})
	}
}

// BenchmarkCompressionRead is the worker's parsing of one client message
// of the same 500 bytes, plain or compressed, without the syscalls: the
// CPU that inflating adds per incoming message.
func BenchmarkCompressionRead(b *testing.B) {
	for _, compress := range []bool{false, true} {
		name := "off"
		if compress {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			c, r := parsePath(Config{Compression: compress})
			f := ws.NewTextFrame(publication500)
			if compress {
				var err error
				if f, err = wsflate.CompressFrame(f); err != nil {
					b.Fatal(err)
				}
			}
			input, err := ws.CompileFrame(ws.MaskFrame(f))
			if err != nil {
				b.Fatal(err)
			}
			data := make([]byte, len(input))
			copy(data, input)
			if out, _, _ := r.frames(c, data); out != keepReading { // warms the pool
				b.Fatalf("frames: %v", out)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(publication500)))
			for b.Loop() {
				copy(data, input)
				out, used, _ := r.frames(c, data)
				if out != keepReading || used != len(data) {
					b.Fatalf("frames: %v %d", out, used)
				}
			}
			b.ReportMetric(float64(len(input)), "wire-bytes/op")
		})
	}
}
