package hub_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/jsonclient"
)

// TestWriteCoalesceBatchesBursts: with WriteCoalesce, a burst of
// publications right after a write goes out in one or two frames, in order,
// instead of a frame each; and a publication to a client that has not been
// written to for longer than the interval goes out at once.
func TestWriteCoalesceBatchesBursts(t *testing.T) {
	t.Parallel()
	const interval = 400 * time.Millisecond
	n := startNodeMem(t, hub.Config{
		Channels: openChannels(),
		Client:   hub.ClientConfig{WriteCoalesce: interval},
	})
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
