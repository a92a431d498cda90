package websocket

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// TestWriteTimeoutBoundsProgress: WriteTimeout bounds a write's progress,
// not its length. A frame far larger than the socket buffers goes to a
// client that reads steadily but slowly, taking much longer than
// WriteTimeout in all: the write completes and the client gets every byte.
// The same frame to a client that stopped reading fails after about
// WriteTimeout.
func TestWriteTimeoutBoundsProgress(t *testing.T) {
	const timeout = 200 * time.Millisecond
	frame := bytes.Repeat([]byte("x"), 24<<20) // more than loopback's socket buffers
	t.Run("steady reader", func(t *testing.T) {
		h := newHarness(t, Config{WriteTimeout: timeout})
		rc, s := h.dialRaw()
		got := make(chan int64, 1)
		go func() {
			// 64 KiB every 5 ms: about 13 MB/s, so the frame takes
			// about 2 s, ten times WriteTimeout.
			var n int64
			buf := make([]byte, 64<<10)
			for n < int64(len(frame)) {
				k, err := io.ReadFull(rc.nc, buf[:min(len(buf), len(frame)+16-int(n))])
				n += int64(k)
				if err != nil {
					break
				}
				time.Sleep(5 * time.Millisecond) // the reader's pace
			}
			got <- n
		}()
		start := time.Now()
		if err := s.c.WriteFrame(frame); err != nil {
			t.Fatalf("WriteFrame to a client that reads steadily failed after %v: %v", time.Since(start), err)
		}
		if d := time.Since(start); d < 2*timeout {
			t.Fatalf("the write took %v: the frame fit in the socket buffers, the test proves nothing", d)
		}
		if n := <-got; n < int64(len(frame)) {
			t.Fatalf("the client read %d bytes of a %d-byte frame", n, len(frame))
		}
	})
	t.Run("stopped reader", func(t *testing.T) {
		h := newHarness(t, Config{WriteTimeout: timeout})
		_, s := h.dialRaw() // reads nothing
		start := time.Now()
		err := s.c.WriteFrame(frame)
		d := time.Since(start)
		if err == nil {
			t.Fatal("WriteFrame to a client that reads nothing succeeded")
		}
		if d > 5*timeout {
			t.Fatalf("WriteFrame to a client that reads nothing failed only after %v", d)
		}
	})
}
