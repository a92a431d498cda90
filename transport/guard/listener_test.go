package guard

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// A connection that never finishes its request line is closed after the
// header timeout, and Close ends every goroutine of the listener, also
// with handshakes still being read.
func TestUpgradeListenerTimeoutAndClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served <- struct{}{} })
	// The idle timeout is long: what closes the slow connection is its
	// request line, begun and not finished within the header timeout.
	l := NewListener(inner, []string{"/connection/websocket"}, h, time.Minute, 200*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))

	slow, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := io.WriteString(slow, "GET /connection/web"); err != nil {
		t.Fatal(err)
	}
	_ = slow.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := slow.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("slow request line: read %v, want EOF once the header timeout passed", err)
	}

	// A handshake in flight when the listener closes.
	stuck, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	if _, err := io.WriteString(stuck, "GET "); err != nil {
		t.Fatal(err)
	}
	// Accept gives up once closed.
	accepted := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		accepted <- err
	}()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-accepted; err == nil {
		t.Error("Accept after Close returned a connection")
	}
	select {
	case <-served:
		t.Error("the handler saw an incomplete request")
	default:
	}
}

// A connection that stays silent past the header timeout is still served
// when its request comes (as a client's pooled, not yet used connection
// is: Go's http.Transport does not retry a request that fails on one, so
// closing it there failed such requests with EOF), and one that stays
// silent past the idle timeout is closed.
func TestUpgradeListenerSilentConnection(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const header = 100 * time.Millisecond
	serve := func(t *testing.T, idle time.Duration) (addr string, stop func()) {
		t.Helper()
		inner, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
		l := NewListener(inner, []string{"/connection/websocket"}, h, idle, header, slog.New(slog.NewTextHandler(io.Discard, nil)))
		srv := &http.Server{Handler: h, ReadHeaderTimeout: header}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(l) }()
		return inner.Addr().String(), func() {
			_ = srv.Close()
			if err := <-done; !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("Serve: %v", err)
			}
		}
	}

	t.Run("ServedAfterTheHeaderTimeout", func(t *testing.T) {
		addr, stop := serve(t, time.Minute)
		defer stop()
		for _, path := range []string{"/api/publish", "/connection/websocket"} {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			// Silent for several header timeouts; the idle timeout is far.
			<-time.After(5 * header)
			if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: herald\r\n\r\n"); err != nil {
				t.Fatalf("%s: write after %s of silence: %v", path, 5*header, err)
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("%s: no answer after %s of silence: %v", path, 5*header, err)
			}
			_ = resp.Body.Close()
			// The upgrade path answers a GET that is no handshake with what
			// the handler wrote (200 here): what matters is an answer.
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: status %d, want 200", path, resp.StatusCode)
			}
			_ = c.Close()
		}
	})

	t.Run("ClosedAfterTheIdleTimeout", func(t *testing.T) {
		addr, stop := serve(t, 3*header)
		defer stop()
		// Timed from before the dial: the listener may accept, and start
		// the idle timeout, before this goroutine runs again after Dial
		// returns (under -race on a loaded machine, by milliseconds).
		start := time.Now()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("silent connection: read %v, want EOF once the idle timeout passed", err)
		}
		if took := time.Since(start); took < 3*header {
			t.Errorf("silent connection closed after %s, before the idle timeout (%s)", took, 3*header)
		}
	})
}
