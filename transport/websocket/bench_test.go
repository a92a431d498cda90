package websocket

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"

	"github.com/heraldhq/herald/internal/test/testenv"
)

// echoReceiver answers every frame with itself, like a hub that replies.
type echoReceiver struct{ c *Conn }

func (s *echoReceiver) HandleFrame(frame []byte) bool { return s.c.WriteFrame(frame) == nil }
func (s *echoReceiver) HandleClose()                  {}

// benchServer starts a Server with cfg (the test's poller and a quiet
// logger unless cfg sets them) behind an httptest server, closed when b
// ends, and returns its ws:// URL.
func benchServer(b *testing.B, cfg Config, accept AcceptFunc) string {
	b.Helper()
	if cfg.Poller == "" {
		cfg.Poller = Poller(testenv.WebSocketPoller())
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	srv, err := NewServer(cfg, accept)
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(func() {
		_ = srv.Close()
		hs.Close()
	})
	return "ws" + strings.TrimPrefix(hs.URL, "http")
}

// acceptConns is an AcceptFunc that hands each connection to conns and
// leaves it alone, for benchmarks that write to it themselves.
func acceptConns(conns chan<- *Conn) AcceptFunc {
	return func(c *Conn, r *http.Request) Receiver {
		conns <- c
		return nopReceiver{}
	}
}

// dialDiscard dials url with d, reads and drops everything the server
// sends, and returns the client's connection and the server's, which
// accept (acceptConns) handed to conns.
func dialDiscard(b *testing.B, d ws.Dialer, url string, conns <-chan *Conn) (net.Conn, *Conn) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nc, _, _, err := d.Dial(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = nc.Close() })
	go func() { _, _ = io.Copy(io.Discard, nc) }()
	select {
	case c := <-conns:
		return nc, c
	case <-time.After(5 * time.Second):
		b.Fatal("no connection")
		return nil, nil
	}
}

// parsePath is the read side of one connection of a Server with cfg and no
// socket, for benchmarks of frame parsing without the syscalls.
func parsePath(cfg Config) (*Conn, *reader) {
	srv := &Server{cfg: cfg.WithDefaults()}
	srv.log = srv.cfg.Logger
	if cfg.Compression {
		srv.flate = newCompressionPools(srv.cfg.CompressionLevel)
	}
	c := &Conn{srv: srv, deflate: cfg.Compression, receiver: nopReceiver{}}
	return c, &reader{srv: srv}
}

// BenchmarkEchoRoundTrip is one client frame in, one server frame out,
// through the poller, a worker and WriteFrame.
func BenchmarkEchoRoundTrip(b *testing.B) {
	url := benchServer(b, Config{}, func(c *Conn, r *http.Request) Receiver { return &echoReceiver{c: c} })
	nc, br, _, err := ws.Dial(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	if br == nil {
		br = bufio.NewReader(nc)
	}
	payload := []byte(`{"id":7,"publish":{"channel":"chat","data":{"text":"hello"}}}`)
	frame, err := ws.CompileFrame(ws.MaskFrame(ws.NewTextFrame(payload)))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, len(payload))
	hdr := make([]byte, ws.MaxHeaderSize)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if _, err := nc.Write(frame); err != nil {
			b.Fatal(err)
		}
		h, err := ws.ReadHeaderBuffer(br, hdr)
		if err != nil || h.Length != int64(len(payload)) {
			b.Fatalf("header %+v: %v", h, err)
		}
		if _, err := io.ReadFull(br, buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteFrame is the hub's write path to a client that reads fast.
func BenchmarkWriteFrame(b *testing.B) {
	conns := make(chan *Conn, 1)
	_, c := dialDiscard(b, ws.DefaultDialer, benchServer(b, Config{}, acceptConns(conns)), conns)
	frame := []byte(strings.Repeat(`{"push":{"channel":"chat","pub":{"data":{"t":1},"offset":7}}}`+"\n", 8))
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if err := c.WriteFrame(frame); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseFrames is the worker's parsing of a read buffer holding ten
// masked frames, without the syscalls.
func BenchmarkParseFrames(b *testing.B) {
	c, r := parsePath(Config{})
	var input []byte
	for range 10 {
		f, err := ws.CompileFrame(ws.MaskFrame(ws.NewTextFrame([]byte(strings.Repeat("x", 100)))))
		if err != nil {
			b.Fatal(err)
		}
		input = append(input, f...)
	}
	data := make([]byte, len(input))
	b.ReportAllocs()
	b.SetBytes(int64(len(input)))
	for b.Loop() {
		copy(data, input)
		out, used, _ := r.frames(c, data)
		if out != keepReading || used != len(data) {
			b.Fatalf("frames: %v %d", out, used)
		}
	}
}
