package websocket

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// TestStartFrameDoesNotWait: StartFrame to a client that is not reading
// returns at once, with the frame not done, instead of waiting up to
// WriteTimeout as WriteFrame does (the hub's shared writers call it, so
// that none waits on one client); FinishFrame then writes the rest, in
// order and whole, once the client reads, and the connection takes
// further frames after it.
func TestStartFrameDoesNotWait(t *testing.T) {
	forEachPoller(t, func(t *testing.T, p Poller) {
		h := newHarness(t, Config{WriteTimeout: 5 * time.Second, Poller: p})
		rc, s := h.dialRaw()
		frame := bytes.Repeat([]byte("y"), 24<<20) // more than loopback's socket buffers
		start := time.Now()
		done, err := s.c.StartFrame(frame)
		if err != nil || done {
			t.Fatalf("StartFrame of 24 MiB to a client not reading: done %v, err %v", done, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("StartFrame waited %v", d)
		}
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(io.LimitReader(rc.nc, int64(len(frame))+bigHeader+2+5))
			got <- b
		}()
		if err := s.c.FinishFrame(frame); err != nil {
			t.Fatalf("FinishFrame: %v", err)
		}
		if err := s.c.WriteFrame([]byte("after")); err != nil {
			t.Fatalf("WriteFrame after FinishFrame: %v", err)
		}
		b := <-got
		if len(b) != len(frame)+bigHeader+2+5 || !bytes.Equal(b[bigHeader:bigHeader+len(frame)], frame) || string(b[len(b)-5:]) != "after" {
			t.Fatalf("the client got %d bytes, want the frame whole and then %q", len(b), "after")
		}
	})
}
