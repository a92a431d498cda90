package main

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// TestWriterCoalesces: publications that arrive while the writer is
// blocked in a write go out together in its next write, and a subscriber
// whose socket fails is dropped.
func TestWriterCoalesces(t *testing.T) {
	var st stats
	ch, client := pipeChannel(t, writerOptions{maxPending: 1 << 20}, &st)
	w := ch.writers[0]

	frame := func(s string) *[len(formats)][]byte {
		return &[len(formats)][]byte{[]byte(s), []byte("pb-" + s)}
	}
	if err := ch.publish(frame("a|")); err != nil {
		t.Fatal(err)
	}
	// The writer is now blocked writing "a|" into the pipe; these queue.
	waitFor(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.pending[protocol.TypeJSON]) == 0
	})
	for _, s := range []string{"b|", "c|", "d|"} {
		if err := ch.publish(frame(s)); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 64)
	for _, want := range []string{"a|", "b|c|d|"} {
		n, err := client.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(buf[:n]); got != want {
			t.Fatalf("write %q, want %q (no Protobuf subscriber: no Protobuf bytes)", got, want)
		}
	}
	waitFor(t, func() bool { return st.rounds.Load() == 2 })
	if st.writes.Load() != 2 || st.bytes.Load() != int64(len("a|b|c|d|")) {
		t.Errorf("writes %d bytes %d", st.writes.Load(), st.bytes.Load())
	}

	client.Close()
	if err := ch.publish(frame("e|")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.subs) == 0 && w.perFmt[protocol.TypeJSON] == 0
	})
}

// pipeChannel is a channel of one writer, running until the test ends,
// with one JSON subscriber at the server end of a net.Pipe (no buffering:
// each Write waits for a Read); it returns the client end.
func pipeChannel(t *testing.T, o writerOptions, st *stats) (*channel, net.Conn) {
	t.Helper()
	ch := newChannel(1, o, st)
	server, client := net.Pipe()
	ch.add(&conn{nc: server, proto: protocol.TypeJSON})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ch.writers[0].run(done)
	}()
	t.Cleanup(func() {
		client.Close()
		close(done)
		wg.Wait()
	})
	return ch, client
}

// TestRoundInterval: with a round interval, a publication that arrives
// sooner after a round waits for the rest of the interval and goes out
// with the ones that arrive meanwhile, in one write.
func TestRoundInterval(t *testing.T) {
	const interval = 200 * time.Millisecond
	var st stats
	ch, client := pipeChannel(t, writerOptions{maxPending: 1 << 20, roundInterval: interval}, &st)
	frame := func(s string) *[len(formats)][]byte {
		return &[len(formats)][]byte{[]byte(s), nil}
	}
	buf := make([]byte, 64)
	read := func() string {
		n, err := client.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	}
	if err := ch.publish(frame("a|")); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "a|" {
		t.Fatalf("first write %q, want a|: the first round does not wait", got)
	}
	first := time.Now()
	for _, s := range []string{"b|", "c|"} {
		if err := ch.publish(frame(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(); got != "b|c|" {
		t.Fatalf("second write %q, want b|c|: both wait for the interval and go out together", got)
	}
	// The round began no sooner than the interval after the first; the
	// first read returned after that round began, so allow for it.
	if since := time.Since(first); since < interval-20*time.Millisecond {
		t.Fatalf("second round %v after the first, want about %v", since, interval)
	}
}

// TestBacklogRefuses: a writer with more than maxPending bytes waiting
// refuses publications rather than buffer without bound.
func TestBacklogRefuses(t *testing.T) {
	var st stats
	ch := newChannel(1, writerOptions{maxPending: 4}, &st) // no writer goroutine: nothing drains
	ch.add(&conn{proto: protocol.TypeProtobuf})
	f := &[len(formats)][]byte{[]byte("json"), []byte("proto")}
	if err := ch.publish(f); err != nil {
		t.Fatal(err)
	}
	if err := ch.publish(f); err != errBacklog {
		t.Fatalf("got %v, want errBacklog", err)
	}
	if p := ch.writers[0].pending; !bytes.Equal(p[protocol.TypeProtobuf], []byte("proto")) || len(p[protocol.TypeJSON]) != 0 || st.refused.Load() != 1 {
		t.Fatalf("pending %q, refused %d", p, st.refused.Load())
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
