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
	ch := newChannel(1, 1<<20, 0, &st)
	w := ch.writers[0]
	server, client := net.Pipe() // no buffering: each Write waits for a Read
	defer client.Close()
	ch.add(&conn{nc: server, proto: protocol.TypeJSON})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.run(done)
	}()
	defer func() {
		close(done)
		wg.Wait()
	}()

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

// TestBacklogRefuses: a writer with more than maxPending bytes waiting
// refuses publications rather than buffer without bound.
func TestBacklogRefuses(t *testing.T) {
	var st stats
	ch := newChannel(1, 4, 0, &st) // no writer goroutine: nothing drains
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
