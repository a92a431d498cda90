package httpstream

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// blockedWriter is a response whose client does not read: a write waits
// until release is closed.
type blockedWriter struct {
	header  http.Header
	entered chan struct{} // a write has begun
	release chan struct{}
}

func (w *blockedWriter) Header() http.Header { return w.header }
func (w *blockedWriter) WriteHeader(int)     {}
func (w *blockedWriter) Write(b []byte) (int, error) {
	select {
	case w.entered <- struct{}{}:
	default:
	}
	<-w.release
	return len(b), nil
}
func (w *blockedWriter) Flush() {}

// TestStartFrameDoesNotWaitForTheClient: the hub's shared writers start a
// stream's writes (hub.WriteStarter) and never wait for a client that does
// not read: the first frame is handed to the handler's goroutine, and the
// next, while that write waits, is refused at once for the client's own
// goroutine to write after it (FinishFrame), in order. Before, the hub's
// writer wrote each frame itself and waited up to the write timeout.
func TestStartFrameDoesNotWaitForTheClient(t *testing.T) {
	w := &blockedWriter{header: http.Header{}, entered: make(chan struct{}, 1), release: make(chan struct{})}
	s := newStream(w, protocol.TypeJSON, framingStream, false, Config{WriteTimeout: time.Hour, Logger: slog.New(slog.DiscardHandler)}, "test")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan struct{})
	go func() { s.run(ctx); close(ran) }()

	start := time.Now()
	if done, err := s.StartFrame([]byte(`{"id":1}`)); !done || err != nil {
		t.Fatalf("first frame: done %v, err %v; want handed over", done, err)
	}
	<-w.entered // the handler's goroutine writes it, and waits
	if done, err := s.StartFrame([]byte(`{"id":2}`)); done || err != nil {
		t.Fatalf("second frame while the first waits: done %v, err %v; want false, nil", done, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("starting two writes to a client that does not read took %s", d)
	}
	finished := make(chan error, 1)
	go func() { finished <- s.FinishFrame([]byte(`{"id":2}`)) }()
	select {
	case err := <-finished:
		t.Fatalf("the second frame was written (%v) before the first", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(w.release)
	if err := <-finished; err != nil {
		t.Fatalf("second frame: %v", err)
	}
	s.Close(3000, "bye")
	<-ran
	s.end()
}
