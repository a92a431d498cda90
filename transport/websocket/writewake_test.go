package websocket

import (
	"bytes"
	"testing"
	"time"
)

// TestWriteTimeoutCountsWhatThePeerTakes: a client that reads steadily,
// but slowly against a full socket buffer, is not cut. A full send buffer
// wakes its writer only once a good part of it has drained, so the write
// itself can get nothing in for longer than WriteTimeout while the client
// reads all along; what counts is what the client takes, as the kernel
// acknowledges it (Delivered). On systems that cannot count it, the
// write's own progress is used and this test is skipped.
func TestWriteTimeoutCountsWhatThePeerTakes(t *testing.T) {
	const timeout = 100 * time.Millisecond
	h := newHarness(t, Config{WriteTimeout: timeout})
	rc, s := h.dialRaw()
	if _, ok := s.c.Delivered(); !ok {
		t.Skip("this system does not count what the peer took")
	}
	frame := bytes.Repeat([]byte("x"), 3<<20)
	// 8 KiB every 5 ms, about 1.6 MB/s: the frame takes about 2 s, and the
	// kernel's send buffer (megabytes) drains a third in about as long as
	// it takes to fill it twice over.
	got := readPaced(rc.nc, int64(len(frame))+bigHeader, 8<<10)
	start := time.Now()
	if err := s.c.WriteFrame(frame); err != nil {
		t.Fatalf("WriteFrame to a client that reads steadily failed after %v: %v", time.Since(start), err)
	}
	if n := <-got; n < int64(len(frame))+bigHeader {
		t.Fatalf("the client read %d bytes of a %d-byte frame", n, len(frame))
	}
}
