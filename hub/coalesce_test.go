package hub_test

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/protocol"
)

// TestWriteCoalesceBatchesBursts: at a given coalescing interval, a burst
// of publications right after a write goes out in one or two frames, in
// order, instead of a frame each (a busy connection is written at most
// once per interval); and a publication to a client that has not been
// written to for longer than the interval goes out at once (a rare one is
// not delayed).
func TestWriteCoalesceBatchesBursts(t *testing.T) {
	t.Parallel()
	const interval = 400 * time.Millisecond
	n := startNodeMem(t, hub.Config{
		Channels: openChannels(),
		Client:   hub.ClientConfig{WriteCoalesce: interval},
	})
	n.hub.PinWriteInterval(interval)
	c, _ := n.dialMem(t)
	c.Connect("u")
	c.MustSubscribe(2, "s", "") // a write: the interval starts now

	const burst = 30
	start := time.Now()
	for i := 1; i <= burst; i++ {
		if _, err := n.hub.Publish(context.Background(), "s", []byte(`{"seq":`+strconv.Itoa(i)+`}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	published := time.Since(start)
	var got []int64
	frames := 0
	for len(got) < burst {
		frames++
		for _, m := range c.DecodeFrame(c.Read()) {
			got = append(got, jsonclient.Num(jsonclient.Path(m, "push", "pub", "data", "seq")))
		}
	}
	for i, s := range got {
		if s != int64(i+1) {
			t.Fatalf("publications out of order: %v", got)
		}
	}
	// Publishing took far less than the interval unless the machine is
	// starved; every interval it took allows one more frame.
	if limit := 1 + int(published/interval) + 1; frames > limit {
		t.Fatalf("%d publications came in %d frames (publishing took %v), want at most %d", burst, frames, published, limit)
	}

	// Idle for longer than the interval: the next publication is not held.
	time.Sleep(interval + 50*time.Millisecond)
	sent := time.Now()
	if _, err := n.hub.Publish(context.Background(), "s", []byte(`{"seq":99}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	m := c.Next()
	if took := time.Since(sent); took >= interval {
		t.Fatalf("publication to an idle client took %v, want it written at once (interval %v)", took, interval)
	}
	if s := jsonclient.Num(jsonclient.Path(m, "push", "pub", "data", "seq")); s != 99 {
		t.Fatalf("got seq %d, want 99", s)
	}
}

// TestWriteCoalesceShutdown: a client waiting for its interval when the
// hub shuts down still gets what was queued, then the shutdown close; the
// coalescer's goroutine ends (goleak checks in TestMain).
func TestWriteCoalesceShutdown(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, hub.Config{
		Channels: openChannels(),
		Client:   hub.ClientConfig{WriteCoalesce: time.Second},
	})
	h.PinWriteInterval(time.Second)
	n := &node{t: t, hub: h}
	c, _ := n.dialMem(t)
	c.Connect("u")
	c.MustSubscribe(2, "s", "")
	for i := 1; i <= 3; i++ {
		if _, err := h.Publish(context.Background(), "s", []byte(`{"seq":`+strconv.Itoa(i)+`}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	var got []int64
	for len(got) < 3 {
		for _, m := range c.DecodeFrame(c.Read()) {
			got = append(got, jsonclient.Num(jsonclient.Path(m, "push", "pub", "data", "seq")))
		}
	}
	if got[0] != 1 || got[2] != 3 {
		t.Fatalf("got %v, want 1, 2, 3", got)
	}
	c.ExpectClose(3001, "shutdown")
}

// costlyTransport stands for a socket whose writes cost time, as the write
// system call does on a busy node: each write takes cost. It counts frames
// and the messages in them.
type costlyTransport struct {
	cost   time.Duration
	mu     sync.Mutex
	frames int
	msgs   int
	wrote  chan struct{}
}

func (t *costlyTransport) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *costlyTransport) WriteFrame(frame []byte) error {
	time.Sleep(t.cost)
	t.mu.Lock()
	t.frames++
	t.msgs += bytes.Count(frame, []byte("\n")) + 1
	t.mu.Unlock()
	select {
	case t.wrote <- struct{}{}:
	default:
	}
	return nil
}

func (t *costlyTransport) Close(uint32, string) {}

func (t *costlyTransport) counts() (frames, msgs int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.frames, t.msgs
}

// TestWriteCoalesceAdapts: with the defaults, a node whose writes are
// cheap writes every message at once (interval zero); when writes take
// most of its CPUs the interval grows, up to its bound, and busy
// connections get several messages per write; when the load ends the
// interval goes back to zero.
func TestWriteCoalesceAdapts(t *testing.T) {
	t.Parallel()
	const bound = 20 * time.Millisecond
	h := startNodeMem(t, anonymousConfig(hub.ClientConfig{WriteCoalesce: bound})).hub
	ctx := context.Background()
	connect := []byte(`{"id":1,"connect":{}}`)
	subscribe := []byte(`{"id":2,"subscribe":{"channel":"s"}}`)

	// A lone client on an idle node: written at once, one message a frame.
	lone := &costlyTransport{wrote: make(chan struct{}, 16)}
	lc := h.NewClient(lone, "127.0.0.1:1")
	lc.HandleFrame(connect)
	recv(t, lone.wrote, "the connect reply")
	lc.HandleFrame(subscribe)
	recv(t, lone.wrote, "the subscribe reply")
	for i := range 5 {
		if _, err := h.Publish(ctx, "s", []byte(`{"seq":`+strconv.Itoa(i)+`}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
		recv(t, lone.wrote, "a publication")
	}
	if iv := h.WriteInterval(); iv != 0 {
		t.Fatalf("idle node: write interval %v, want 0", iv)
	}
	if f, m := lone.counts(); f != m {
		t.Fatalf("idle node: %d messages in %d frames, want one a frame", m, f)
	}

	// Many subscribers whose writes cost 250 µs each: the writers are busy
	// all the time, so the interval grows to its bound. The cost is well
	// under maxCountedWrite (2 ms), so that a write the machine delays (a
	// loaded machine running -race tests beside others) still counts as
	// busy up to its end: with writes of 1 ms, delayed to 5 ms and more,
	// the measured load stayed under the threshold and the interval near
	// zero for the whole deadline.
	const subscribers = 200
	trs := make([]*costlyTransport, subscribers)
	busy := make([]*hub.Client, subscribers)
	for i := range trs {
		trs[i] = &costlyTransport{cost: 250 * time.Microsecond, wrote: make(chan struct{}, 1024)}
		c := h.NewClient(trs[i], "127.0.0.1:1")
		c.HandleFrame(connect)
		recv(t, trs[i].wrote, "a connect reply")
		c.HandleFrame(subscribe)
		recv(t, trs[i].wrote, "a subscribe reply")
		busy[i] = c
	}
	var before [subscribers][2]int
	for i, tr := range trs {
		before[i][0], before[i][1] = tr.counts()
	}
	const busyFor = 15 * time.Second // the loop ends when the interval gets there
	deadline := time.Now().Add(busyFor)
	published := 0
	for h.WriteInterval() < bound {
		if time.Now().After(deadline) {
			t.Fatalf("writes busy for %v: write interval %v, want it grown to %v", busyFor, h.WriteInterval(), bound)
		}
		if _, err := h.Publish(ctx, "s", []byte(`{"seq":0}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
		published++
		time.Sleep(200 * time.Microsecond)
	}
	// Keep publishing for a few intervals at the bound, then check that
	// busy connections got their messages batched.
	for end := time.Now().Add(5 * bound); time.Now().Before(end); {
		if _, err := h.Publish(ctx, "s", []byte(`{"seq":0}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
		published++
		time.Sleep(200 * time.Microsecond)
	}
	// Every copy arrives, batched.
	var frames, msgs int
	for i, tr := range trs {
		for {
			f, m := tr.counts()
			if m-before[i][1] >= published {
				frames += f - before[i][0]
				msgs += m - before[i][1]
				break
			}
			recv(t, tr.wrote, "publications")
		}
	}
	if msgs < 2*frames {
		t.Fatalf("busy node: %d messages in %d frames, want at least 2 a frame", msgs, frames)
	}
	t.Logf("busy node: %d publications, %.1f messages a frame", published, float64(msgs)/float64(frames))

	// The load ends (the busy subscribers leave): after a quiet spell, the
	// next write finds the node idle and the interval back to zero.
	for _, c := range busy {
		c.HandleClose()
	}
	// The first write after the load may still count the load's last
	// writes; the ones after it find the node quiet.
	for deadline := time.Now().Add(5 * time.Second); ; {
		time.Sleep(50 * time.Millisecond) // the quiet spell is what is tested
		if _, err := h.Publish(ctx, "s", []byte(`{"seq":1}`), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
		recv(t, lone.wrote, "a publication after the load")
		if h.WriteInterval() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("load ended 5s ago: write interval %v, want 0", h.WriteInterval())
		}
	}
}
