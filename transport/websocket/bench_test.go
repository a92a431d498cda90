package websocket

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"

	"github.com/heraldhq/herald/internal/testenv"
)

// echoReceiver answers every frame with itself, like a hub that replies.
type echoReceiver struct{ c *Conn }

func (s *echoReceiver) HandleFrame(frame []byte) bool { return s.c.WriteFrame(frame) == nil }
func (s *echoReceiver) HandleClose()                  {}

// benchServer starts a Server whose receivers are made by mk.
func benchServer(b *testing.B, mk func(c *Conn) Receiver) string {
	b.Helper()
	srv, err := NewServer(Config{Poller: Poller(testenv.WebSocketPoller()), Logger: quietLogger}, func(c *Conn, r *http.Request) Receiver { return mk(c) })
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

// BenchmarkEchoRoundTrip is one client frame in, one server frame out,
// through the poller, a worker and WriteFrame.
func BenchmarkEchoRoundTrip(b *testing.B) {
	url := benchServer(b, func(c *Conn) Receiver { return &echoReceiver{c: c} })
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
	url := benchServer(b, func(c *Conn) Receiver {
		conns <- c
		return &echoReceiver{c: c}
	})
	nc, _, _, err := ws.Dial(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	go func() { _, _ = io.Copy(io.Discard, nc) }()
	var c *Conn
	select {
	case c = <-conns:
	case <-time.After(5 * time.Second):
		b.Fatal("no connection")
	}
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
	srv := &Server{cfg: Config{}.withDefaults()}
	srv.log = srv.cfg.Logger
	c := &Conn{srv: srv}
	c.receiver = countReceiver{}
	r := &reader{srv: srv}
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

type countReceiver struct{}

func (countReceiver) HandleFrame([]byte) bool { return true }
func (countReceiver) HandleClose()            {}
