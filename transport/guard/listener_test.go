package guard

import (
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
	l := NewListener(inner, []string{"/connection/websocket"}, h, 200*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))

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
