package hubtest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/protocol"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// receiver records what the Conn calls, and fails the test on calls that
// break the transport contract: HandleFrame and HandleClose at once, or
// anything after HandleClose.
type receiver struct {
	t      *testing.T
	mu     sync.Mutex
	frames [][]byte // frames as handed over, kept to see them overwritten
	copies []string // their contents during HandleFrame
	closes int
	active atomic.Int32
	// stop makes HandleFrame return false for this frame.
	stop string
	// hold, when set, blocks HandleFrame and HandleClose until closed.
	hold chan struct{}
}

func (s *receiver) enter() {
	if s.active.Add(1) != 1 {
		s.t.Error("HandleFrame and HandleClose called at once")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closes > 0 {
		s.t.Error("called after HandleClose")
	}
}

func (s *receiver) HandleFrame(frame []byte) bool {
	s.enter()
	defer s.active.Add(-1)
	if s.hold != nil {
		<-s.hold
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frames = append(s.frames, frame)
	s.copies = append(s.copies, string(frame))
	return string(frame) != s.stop
}

func (s *receiver) HandleClose() {
	s.enter()
	defer s.active.Add(-1)
	if s.hold != nil {
		<-s.hold
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closes++
}

func (s *receiver) numCloses() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closes
}

func attached(t *testing.T) (*Conn, *receiver) {
	c := NewConn(protocol.TypeJSON)
	s := &receiver{t: t}
	c.Attach(s)
	return c, s
}

func ctx5s(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestSendOverwritesTheFrameAfterHandleFrame(t *testing.T) {
	c, s := attached(t)
	if err := c.Send([]byte(`{"id":1}`)); err != nil {
		t.Fatal(err)
	}
	if s.copies[0] != `{"id":1}` {
		t.Fatalf("frame during HandleFrame: %q", s.copies[0])
	}
	if !bytes.Equal(s.frames[0], bytes.Repeat([]byte{poison}, len(`{"id":1}`))) {
		t.Fatalf("frame kept after HandleFrame: %q, want it overwritten", s.frames[0])
	}
	c.Drop()
}

func TestSendStopsAfterHandleFrameReturnsFalse(t *testing.T) {
	c, s := attached(t)
	s.stop = "stop"
	for _, f := range []string{"a", "stop"} {
		if err := c.Send([]byte(f)); err != nil {
			t.Fatalf("send %q: %v", f, err)
		}
	}
	if err := c.Send([]byte("b")); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after HandleFrame returned false: %v", err)
	}
	if len(s.copies) != 2 {
		t.Fatalf("delivered %q", s.copies)
	}
	c.Drop()
}

func TestCloseFollowedByHandleCloseOnce(t *testing.T) {
	c, s := attached(t)
	s.hold = make(chan struct{})
	if err := c.WriteFrame([]byte("before")); err != nil {
		t.Fatal(err)
	}
	// HandleClose blocks until hold is closed: if Close called it, Close
	// would not return.
	returned := make(chan struct{})
	go func() {
		c.Close(4000, "bye")
		c.Close(4001, "again")
		close(returned)
	}()
	wait(t, returned, "Close to return while HandleClose is held")
	wait(t, c.Closed(), "Closed")
	close(s.hold)
	wait(t, c.Done(), "HandleClose")
	if n := s.numCloses(); n != 1 {
		t.Fatalf("HandleClose called %d times", n)
	}
	if code, reason := c.CloseCode(); code != 4000 || reason != "bye" {
		t.Fatalf("close code %d %q", code, reason)
	}
	if err := c.Send([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after close: %v", err)
	}
	if err := c.WriteFrame([]byte("after")); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
	if f, err := c.Next(ctx5s(t)); err != nil || string(f) != "before" {
		t.Fatalf("first Next: %q %v", f, err)
	}
	_, err := c.Next(ctx5s(t))
	var ce *CloseError
	if !errors.As(err, &ce) || ce.Code != 4000 || ce.Reason != "bye" {
		t.Fatalf("Next after the frames: %v", err)
	}
	c.Drop() // waits, changes nothing
	if n := s.numCloses(); n != 1 {
		t.Fatalf("HandleClose called %d times after Drop", n)
	}
}

func TestHandleCloseWaitsForHandleFrame(t *testing.T) {
	c, s := attached(t)
	s.hold = make(chan struct{})
	sent := make(chan error, 1)
	go func() { sent <- c.Send([]byte("slow")) }()
	waitActive(t, &s.active)
	c.Close(4000, "bye")
	// The receiver checks that HandleClose does not overlap HandleFrame.
	close(s.hold)
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	wait(t, c.Done(), "HandleClose")
}

func waitActive(t *testing.T, n *atomic.Int32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("HandleFrame not entered")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestDrop(t *testing.T) {
	c, s := attached(t)
	if err := c.WriteFrame([]byte("queued")); err != nil {
		t.Fatal(err)
	}
	c.Drop()
	if n := s.numCloses(); n != 1 {
		t.Fatalf("HandleClose called %d times by Drop", n)
	}
	c.Drop()
	c.Close(3000, "connection closed") // the hub's close after HandleClose
	select {
	case <-c.Closed():
		t.Fatal("Closed after Drop")
	default:
	}
	if code, _ := c.CloseCode(); code != 0 {
		t.Fatalf("close code %d after Drop", code)
	}
	if n := s.numCloses(); n != 1 {
		t.Fatalf("HandleClose called %d times", n)
	}
	if err := c.WriteFrame([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after Drop: %v", err)
	}
	if f, err := c.Next(ctx5s(t)); string(f) != "queued" || err != nil {
		t.Fatalf("Next: %q %v", f, err)
	}
	if _, err := c.Next(ctx5s(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Drop: %v", err)
	}
}

func TestCloseBeforeAttach(t *testing.T) {
	c := NewConn(protocol.TypeProtobuf)
	c.Close(3001, "shutdown")
	s := &receiver{t: t}
	c.Attach(s)
	wait(t, c.Done(), "HandleClose")
	if s.numCloses() != 1 {
		t.Fatalf("HandleClose called %d times", s.numCloses())
	}
	if c.Protocol() != protocol.TypeProtobuf {
		t.Fatalf("protocol %v", c.Protocol())
	}
}

func TestNextWaitsForFrames(t *testing.T) {
	c, _ := attached(t)
	defer c.Drop()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with a cancelled context: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := c.Next(ctx5s(t))
		if err != nil {
			t.Error(err)
		}
		got <- string(f)
	}()
	frame := []byte("later")
	if err := c.WriteFrame(frame); err != nil {
		t.Fatal(err)
	}
	frame[0] = 'X' // the hub may reuse its buffer
	if f := <-got; f != "later" {
		t.Fatalf("Next: %q", f)
	}
}

func TestStall(t *testing.T) {
	c, _ := attached(t)
	c.Stall()
	written := make(chan error, 1)
	go func() { written <- c.WriteFrame([]byte("held")) }()
	waitWriting(t, c)
	c.Resume()
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if f, err := c.Next(ctx5s(t)); string(f) != "held" || err != nil {
		t.Fatalf("Next: %q %v", f, err)
	}

	t.Run("Close ends a stalled write", func(t *testing.T) {
		c.Stall()
		go func() { written <- c.WriteFrame([]byte("never")) }()
		waitWriting(t, c)
		c.Close(3008, "slow")
		if err := <-written; !errors.Is(err, ErrClosed) {
			t.Fatalf("stalled write after Close: %v", err)
		}
		wait(t, c.Done(), "HandleClose")
	})
}

func TestConcurrentWriteFramePanics(t *testing.T) {
	c, _ := attached(t)
	c.Stall()
	written := make(chan error, 1)
	go func() { written <- c.WriteFrame([]byte("held")) }()
	waitWriting(t, c)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("second WriteFrame at once did not panic")
			}
		}()
		_ = c.WriteFrame([]byte("second"))
	}()
	c.Drop()
	if err := <-written; !errors.Is(err, ErrClosed) {
		t.Fatalf("stalled write after Drop: %v", err)
	}
}

// waitWriting waits until a WriteFrame is in progress: no event marks it.
func waitWriting(t *testing.T, c *Conn) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !c.writing.Load() {
		if time.Now().After(deadline) {
			t.Fatal("WriteFrame not entered")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestFailWrites(t *testing.T) {
	c, _ := attached(t)
	defer c.Drop()
	broken := errors.New("broken pipe")
	c.FailWrites(broken)
	if err := c.WriteFrame([]byte("x")); !errors.Is(err, broken) {
		t.Fatalf("write: %v", err)
	}
	c.FailWrites(nil)
	if err := c.WriteFrame([]byte("y")); err != nil {
		t.Fatalf("write after FailWrites(nil): %v", err)
	}
	if f, err := c.Next(ctx5s(t)); string(f) != "y" || err != nil {
		t.Fatalf("Next: %q %v", f, err)
	}
}

func TestBadUse(t *testing.T) {
	for name, fn := range map[string]func(){
		"unknown protocol": func() { NewConn(protocol.Type(9)) },
		"send before attach": func() {
			_ = NewConn(protocol.TypeJSON).Send([]byte("x"))
		},
		"attach twice": func() {
			c := NewConn(protocol.TypeJSON)
			c.Attach(&receiver{t: t})
			c.Attach(&receiver{t: t})
		},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			fn()
		})
	}
}
