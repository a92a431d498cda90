package websocket

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobwas/ws"
	gorilla "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/internal/test/testenv"
)

const path = "/connection/websocket"

// testReceiver echoes every frame. Frames "close-me" and "stop" exercise
// Close and stopping.
type testReceiver struct {
	c       *Conn
	frames  chan []byte
	closes  atomic.Int32
	closed  chan struct{}
	inside  atomic.Int32 // callbacks running now
	overlap atomic.Bool  // two callbacks ran at once
}

func (s *testReceiver) enter() func() {
	if s.inside.Add(1) != 1 {
		s.overlap.Store(true)
	}
	return func() { s.inside.Add(-1) }
}

func newTestReceiver(c *Conn) *testReceiver {
	return &testReceiver{c: c, frames: make(chan []byte, 64), closed: make(chan struct{})}
}

func (s *testReceiver) HandleFrame(frame []byte) bool {
	defer s.enter()()
	select {
	case s.frames <- append([]byte(nil), frame...):
	default:
	}
	switch string(frame) {
	case "close-me":
		s.c.Close(3501, "bad request")
		return false
	case "stop":
		return false
	}
	return s.c.WriteFrame(frame) == nil
}

func (s *testReceiver) HandleClose() {
	defer s.enter()()
	if s.closes.Add(1) == 1 {
		close(s.closed)
	}
}

// pollersUnderTest lists the read paths the tests run against: epoll and
// portable on Linux, portable elsewhere, or only the one that
// HERALD_TEST_WS_POLLER names.
func pollersUnderTest(t *testing.T) []Poller {
	t.Helper()
	if v := testenv.WebSocketPoller(); v != "" {
		p, err := Poller(v).Resolve()
		if err != nil {
			t.Fatalf("%s: %v", testenv.WebSocketPollerVar, err)
		}
		return []Poller{p}
	}
	if EpollAvailable {
		return []Poller{PollerEpoll, PollerPortable}
	}
	return []Poller{PollerPortable}
}

// forEachPoller runs f as a subtest for every poller under test.
func forEachPoller(t *testing.T, f func(t *testing.T, p Poller)) {
	t.Helper()
	for _, p := range pollersUnderTest(t) {
		t.Run(string(p), func(t *testing.T) { f(t, p) })
	}
}

// harness is a Server behind an httptest server on 127.0.0.1.
type harness struct {
	t         *testing.T
	srv       *Server
	hs        *httptest.Server
	receivers chan *testReceiver
}

// quietLogger keeps the expected protocol errors out of test output.
var quietLogger = slog.New(slog.DiscardHandler)

// nopReceiver accepts every frame and does nothing: the least a Receiver
// can be, so that what a connection costs is the transport's share.
type nopReceiver struct{}

func (nopReceiver) HandleFrame([]byte) bool { return true }
func (nopReceiver) HandleClose()            {}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	h := &harness{t: t, receivers: make(chan *testReceiver, 1024)}
	srv, err := NewServer(cfg, func(c *Conn, r *http.Request) Receiver {
		s := newTestReceiver(c)
		h.receivers <- s
		return s
	})
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	if want, _ := cfg.Poller.Resolve(); srv.Poller() != want {
		t.Fatalf("Poller() = %q, want %q", srv.Poller(), want)
	}
	h.srv = srv
	mux := http.NewServeMux()
	mux.Handle(path, srv)
	h.hs = httptest.NewServer(mux)
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Server.Close: %v", err)
		}
		h.hs.Close()
	})
	return h
}

func (h *harness) url(query string) string {
	u := "ws" + strings.TrimPrefix(h.hs.URL, "http") + path
	if query != "" {
		u += "?" + query
	}
	return u
}

// dial connects a gorilla client and returns it with the server's receiver.
func (h *harness) dial(query string, subprotocols ...string) (*gorilla.Conn, *http.Response, *testReceiver) {
	h.t.Helper()
	d := gorilla.Dialer{Subprotocols: subprotocols, HandshakeTimeout: 5 * time.Second}
	c, resp, err := d.Dial(h.url(query), nil)
	if err != nil {
		h.t.Fatalf("dial: %v", err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c, resp, h.receiver()
}

func (h *harness) receiver() *testReceiver {
	h.t.Helper()
	select {
	case s := <-h.receivers:
		return s
	case <-time.After(5 * time.Second):
		h.t.Fatal("no receiver accepted")
		return nil
	}
}

// rawClient speaks frames directly, for what gorilla cannot send: partial
// and fragmented frames, pipelined handshakes.
type rawClient struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func (h *harness) dialRaw() (*rawClient, *testReceiver) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nc, br, _, err := ws.Dial(ctx, h.url(""))
	if err != nil {
		h.t.Fatalf("raw dial: %v", err)
	}
	if br == nil {
		br = bufio.NewReader(nc)
	}
	h.t.Cleanup(func() { nc.Close() })
	return &rawClient{t: h.t, nc: nc, br: br}, h.receiver()
}

// frameBytes is a masked client frame.
func frameBytes(t *testing.T, op ws.OpCode, fin bool, payload []byte) []byte {
	t.Helper()
	b, err := ws.CompileFrame(ws.MaskFrame(ws.NewFrame(op, fin, payload)))
	if err != nil {
		t.Fatalf("compile frame: %v", err)
	}
	return b
}

func (rc *rawClient) send(op ws.OpCode, fin bool, payload string) {
	rc.t.Helper()
	rc.write(frameBytes(rc.t, op, fin, []byte(payload)))
}

func (rc *rawClient) write(b []byte) {
	rc.t.Helper()
	if _, err := rc.nc.Write(b); err != nil {
		rc.t.Fatalf("raw write: %v", err)
	}
}

// read reads one server frame.
func (rc *rawClient) read() (ws.Header, []byte) {
	rc.t.Helper()
	_ = rc.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	h, err := ws.ReadHeader(rc.br)
	if err != nil {
		rc.t.Fatalf("read header: %v", err)
	}
	p := make([]byte, h.Length)
	if _, err := io.ReadFull(rc.br, p); err != nil {
		rc.t.Fatalf("read payload: %v", err)
	}
	return h, p
}

// readClose reads frames until a close frame and returns its code and reason.
func (rc *rawClient) readClose() (ws.StatusCode, string) {
	rc.t.Helper()
	for {
		h, p := rc.read()
		if h.OpCode == ws.OpClose {
			code, reason := ws.ParseCloseFrameData(p)
			return code, reason
		}
	}
}

// expectEcho sends msg with gorilla and waits for the same message back.
func expectEcho(t *testing.T, c *gorilla.Conn, sendType int, msg string, wantType int) {
	t.Helper()
	if err := c.WriteMessage(sendType, []byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	mt, got, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read echo of %q: %v", msg, err)
	}
	if mt != wantType || string(got) != msg {
		t.Fatalf("echo = (%d, %q), want (%d, %q)", mt, got, wantType, msg)
	}
}

// expectClose reads until the server's close frame and checks it.
func expectClose(t *testing.T, c *gorilla.Conn, code int, reason string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		ce, ok := err.(*gorilla.CloseError)
		if !ok {
			t.Fatalf("read: %v, want close %d", err, code)
		}
		if ce.Code != code || ce.Text != reason {
			t.Fatalf("close = (%d, %q), want (%d, %q)", ce.Code, ce.Text, code, reason)
		}
		return
	}
}

func waitClosed(t *testing.T, s *testReceiver) {
	t.Helper()
	select {
	case <-s.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("HandleClose not called")
	}
}

func newLoopbackServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs
}

// serveAndDial mounts srv at path on a loopback server of its own and
// connects a gorilla client to it, for tests that build their Server
// with an AcceptFunc of their own instead of the harness's.
func serveAndDial(t *testing.T, srv *Server) *gorilla.Conn {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(path, srv)
	hs := newLoopbackServer(t, mux)
	c, _, err := gorilla.DefaultDialer.Dial("ws"+strings.TrimPrefix(hs.URL, "http")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// nextFrame waits for the next frame the receiver handled.
func (s *testReceiver) nextFrame(t *testing.T) string {
	t.Helper()
	select {
	case f := <-s.frames:
		return string(f)
	case <-time.After(5 * time.Second):
		t.Fatal("no frame handled")
		return ""
	}
}
