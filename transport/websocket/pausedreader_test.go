package websocket

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// TestWriteTimeoutGivesAPausedReaderTime: a client that has been reading,
// then takes nothing for longer than WriteTimeout (its process got no CPU:
// the load tool at twice the node's capacity on shared cores), is not cut
// while the pause stays within readerStallWindows timeouts; one that stops
// for good after reading is cut within them, and one that never read is
// cut after one, as before (pace.go). The client's receive buffer is made
// small, so that its kernel stops taking bytes as soon as it stops reading
// and the pause is a pause of what it takes.
func TestWriteTimeoutGivesAPausedReaderTime(t *testing.T) {
	frame := bytes.Repeat([]byte("x"), 24<<20) // more than loopback's socket buffers
	want := int64(len(frame)) + bigHeader

	t.Run("reader that pauses", func(t *testing.T) {
		const timeout = 200 * time.Millisecond
		rc, s := pausedReaderConn(t, timeout)
		// Steady for 5 timeouts, then nothing for 2.5, then everything.
		// A pause of 2.5 spans at least one whole timeout (after which
		// the rule for a client that was not reading cuts it) and at
		// most two, short of readerStallWindows in a row.
		got := readPausing(rc.nc, want, 5*timeout, 5*timeout/2)
		start := time.Now()
		if err := s.c.WriteFrame(frame); err != nil {
			t.Fatalf("WriteFrame to a reader that paused for %v failed after %v: %v", 5*timeout/2, time.Since(start), err)
		}
		if r := <-got; r.n < want {
			t.Fatalf("the client read %d bytes of a %d-byte frame", r.n, want)
		}
	})

	t.Run("reader that stops for good", func(t *testing.T) {
		const timeout = 200 * time.Millisecond
		rc, s := pausedReaderConn(t, timeout)
		got := readPausing(rc.nc, want, 5*timeout, 0)
		err := s.c.WriteFrame(frame)
		if err == nil {
			t.Fatal("WriteFrame to a client that stopped reading succeeded")
		}
		r := <-got
		// From its last byte, at most readerStallWindows timeouts and the
		// window that was running, plus slack for a loaded machine.
		if late := time.Since(r.stoppedAt); late > (readerStallWindows+3)*timeout {
			t.Fatalf("WriteFrame to a client that stopped reading failed %v after it stopped", late)
		}
	})

	t.Run("never read", func(t *testing.T) {
		const timeout = 400 * time.Millisecond
		_, s := pausedReaderConn(t, timeout) // reads nothing
		start := time.Now()
		err := s.c.WriteFrame(frame)
		d := time.Since(start)
		if err == nil {
			t.Fatal("WriteFrame to a client that reads nothing succeeded")
		}
		// One timeout (and the one its receive buffer's filling may
		// count as progress), not readerStallWindows.
		if d >= readerStallWindows*timeout {
			t.Fatalf("WriteFrame to a client that never read failed only after %v (timeout %v)", d, timeout)
		}
	})
}

// pausedReaderConn is a raw client with a small receive buffer, and the
// server's side of it, on a server with WriteTimeout timeout; it skips
// where the kernel does not count what the peer took.
func pausedReaderConn(t *testing.T, timeout time.Duration) (*rawClient, *testReceiver) {
	t.Helper()
	h := newHarness(t, Config{WriteTimeout: timeout})
	rc, s := h.dialRaw()
	if _, ok := s.c.Delivered(); !ok {
		t.Skip("this system does not count what the peer took")
	}
	tc, ok := rc.nc.(*net.TCPConn)
	if !ok {
		t.Fatalf("the raw client's connection is a %T, not TCP", rc.nc)
	}
	if err := tc.SetReadBuffer(64 << 10); err != nil {
		t.Fatalf("SetReadBuffer: %v", err)
	}
	return rc, s
}

// pauseResult is what readPausing read, and when it stopped reading for
// good (the zero time if it did not).
type pauseResult struct {
	n         int64
	stoppedAt time.Time
}

// readPausing reads up to want bytes from r: 64 KiB every 5 ms for
// steady, then nothing for pause, then as fast as it can; with pause 0 it
// stops after steady for good and reports when.
func readPausing(r io.Reader, want int64, steady, pause time.Duration) <-chan pauseResult {
	got := make(chan pauseResult, 1)
	go func() {
		var res pauseResult
		buf := make([]byte, 64<<10)
		read := func() bool {
			k, err := io.ReadFull(r, buf[:min(int64(len(buf)), want-res.n)])
			res.n += int64(k)
			return err == nil && res.n < want
		}
		for end := time.Now().Add(steady); time.Now().Before(end); {
			if !read() {
				got <- res
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		if pause == 0 {
			res.stoppedAt = time.Now()
			got <- res
			return
		}
		time.Sleep(pause)
		for read() {
		}
		got <- res
	}()
	return got
}
