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
		// 64 KiB every 5 ms: about 13 MB/s, so the frame takes about 2 s,
		// ten times WriteTimeout.
		got := readPaced(rc.nc, int64(len(frame))+bigHeader, 64<<10)
		start := time.Now()
		if err := s.c.WriteFrame(frame); err != nil {
			t.Fatalf("WriteFrame to a client that reads steadily failed after %v: %v", time.Since(start), err)
		}
		if d := time.Since(start); d < 2*timeout {
			t.Fatalf("the write took %v: the frame fit in the socket buffers, the test proves nothing", d)
		}
		if n := <-got; n < int64(len(frame))+bigHeader {
			t.Fatalf("the client read %d bytes of a %d-byte frame", n, len(frame))
		}
		// The deadline that bounded that write must not outlive it: a
		// write after it has passed, to a socket with room, succeeds
		// (it once failed at once with "i/o timeout", closing with 3009
		// every client whose socket had filled up a second before).
		time.Sleep(2 * timeout) // past the deadline the slow write set
		small := []byte("after")
		if err := s.c.WriteFrame(small); err != nil {
			t.Fatalf("a write %v after a slow one failed: %v", 2*timeout, err)
		}
		hdr := make([]byte, 2+len(small))
		if _, err := io.ReadFull(rc.nc, hdr); err != nil || !bytes.Equal(hdr[2:], small) {
			t.Fatalf("the client got %q, %v after the slow write", hdr, err)
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

// bigHeader is the header of an unmasked server frame over 64 KiB: 2 bytes
// and a 64-bit length.
const bigHeader = 10

// readPaced reads want bytes from r in chunks of at most chunk bytes, 5 ms
// apart (a reader that is steady but slow), and sends how many it read.
func readPaced(r io.Reader, want int64, chunk int) <-chan int64 {
	got := make(chan int64, 1)
	go func() {
		var n int64
		buf := make([]byte, chunk)
		for n < want {
			k, err := io.ReadFull(r, buf[:min(int64(len(buf)), want-n)])
			n += int64(k)
			if err != nil {
				break
			}
			time.Sleep(5 * time.Millisecond) // the reader's pace
		}
		got <- n
	}()
	return got
}
