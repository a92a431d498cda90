package hub_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// unreadTransport stands for a client that stopped reading: its socket
// takes nothing, so a write started on it (StartFrame) is never done, and
// a write that waits for it (WriteFrame, FinishFrame) waits until release
// is closed, as a write timeout would end it.
type unreadTransport struct {
	release <-chan struct{}
	writes  atomic.Int32 // writes begun
	closed  chan uint32  // buffered 1
}

func newStuckTransport(release <-chan struct{}) *unreadTransport {
	return &unreadTransport{release: release, closed: make(chan uint32, 1)}
}

func (t *unreadTransport) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *unreadTransport) WriteFrame([]byte) error {
	t.writes.Add(1)
	<-t.release
	return errors.New("write timeout")
}

func (t *unreadTransport) StartFrame([]byte) (bool, error) {
	t.writes.Add(1)
	return false, nil
}

func (t *unreadTransport) FinishFrame([]byte) error {
	<-t.release
	return errors.New("write timeout")
}

func (t *unreadTransport) Close(code uint32, _ string) {
	select {
	case t.closed <- code:
	default:
	}
}

// TestNonReadingClientsDelayNobody: more clients than the hub has writers
// stop reading with a reply on its way to each; a new client's connect and
// subscribe replies still come at once. Before, each of the hub's 64
// writers waited in a write to one of them (up to the write timeout, for
// ever here), and every other client's replies waited behind them.
func TestNonReadingClientsDelayNobody(t *testing.T) {
	t.Parallel()
	n := startNodeMem(t, hub.Config{
		Channels: openChannels(),
		Client:   hub.ClientConfig{AllowAnonymousConnectWithoutToken: true, PingInterval: time.Hour},
	})
	release := make(chan struct{})
	const stuck = 100 // more than the hub's writers
	var trs []*unreadTransport
	for i := range stuck {
		tr := newStuckTransport(release)
		trs = append(trs, tr)
		c := n.hub.NewClient(tr, "127.0.0.1:"+string(rune('0'+i%10)))
		c.HandleFrame([]byte(`{"id":1,"connect":{}}`))
		t.Cleanup(c.HandleClose)
	}
	t.Cleanup(func() { close(release) })
	// Every stuck client's connect reply is being written (and waits);
	// before, only as many as the hub has writers ever were.
	deadline := time.Now().Add(3 * time.Second)
	for _, tr := range trs {
		for tr.writes.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	fresh := n.dial(t)
	start := time.Now()
	got := make(chan time.Duration, 1)
	go func() {
		fresh.Connect("fresh")
		connected := time.Since(start)
		fresh.MustSubscribe(2, "room", "")
		got <- max(connected, time.Since(start)-connected)
	}()
	select {
	case d := <-got:
		t.Logf("a fresh client's slowest reply, with %d clients not reading: %s", stuck, d)
		if d > time.Second { // 100 ms on a quiet machine; a shared one under -race is slower
			t.Fatalf("a fresh client waited %s for a reply behind clients that do not read", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("a fresh client got no reply within 5s while %d clients did not read", stuck)
	}
}

// TestPendingFrameCountsAgainstTheQueueBound: a client that stopped
// reading with a large reply in flight is closed as slow (3008) once more
// is queued for it and the write has waited 500 ms: the frame waiting for
// its socket counts against client.queue_max_size with its queue. Before,
// only the queue counted, so such a client held any number of large
// frames until its transport's write timeout.
func TestPendingFrameCountsAgainstTheQueueBound(t *testing.T) {
	t.Parallel()
	cut := make(chan hub.BackpressureEvent, 1)
	cfg := anonymousConfig(hub.ClientConfig{QueueMaxSize: 64 << 10})
	cfg.Channels.WithoutNamespace.AllowPublishForAnonymous = true
	// The close itself follows once the write in progress ends (at the
	// transport's write timeout): the decision is what counts here.
	cfg.Handlers = hub.Handlers{OnBackpressure: func(_ *hub.Client, ev hub.BackpressureEvent) {
		if ev.Closed {
			select {
			case cut <- ev:
			default:
			}
		}
	}}
	h := startNodeMem(t, cfg).hub
	release := make(chan struct{})
	tr := &startingTransport{stuck: newStuckTransport(release)}
	c := h.NewClient(tr, "127.0.0.1:1")
	t.Cleanup(c.HandleClose)
	c.HandleFrame([]byte(`{"id":1,"connect":{}}`))
	c.HandleFrame([]byte(`{"id":2,"subscribe":{"channel":"s"}}`))
	for h.NumSubscriptions() < 1 {
		time.Sleep(time.Millisecond) // the subscribe command runs on the client's goroutine
	}
	big := []byte(`{"pad":"` + strings.Repeat("x", 200<<10) + `"}`)
	if _, err := h.Publish(context.Background(), "s", big, hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	for tr.stuck.writes.Load() == 0 {
		time.Sleep(time.Millisecond) // the writer takes the large one
	}
	small := []byte(`{"n":1}`)
	for i := 0; ; i++ {
		if i == 400 {
			close(release)
			t.Fatal("a client with 200 KB waiting for its socket for 2s was not closed")
		}
		select {
		case <-cut:
			for h.NumClients() > 0 {
				time.Sleep(time.Millisecond) // the close runs on a goroutine of its own
			}
			close(release) // the write fails, as at the write timeout
			if code := recv(t, tr.stuck.closed, "the close"); code != uint32(protocol.DisconnectSlow) {
				t.Fatalf("closed with %d, want %d", code, protocol.DisconnectSlow)
			}
			return
		case <-time.After(5 * time.Millisecond):
		}
		if _, err := h.Publish(context.Background(), "s", small, hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// startingTransport takes every write until the first frame with a
// publication padded with "x", and is stuck from then on.
type startingTransport struct {
	stuck *unreadTransport
	stop  atomic.Bool
}

func (t *startingTransport) takes(frame []byte) bool {
	if t.stop.Load() {
		return false
	}
	if strings.Contains(string(frame), `"pad"`) {
		t.stop.Store(true)
		return false
	}
	return true
}

func (t *startingTransport) Protocol() protocol.Type { return protocol.TypeJSON }

func (t *startingTransport) WriteFrame(frame []byte) error {
	if t.takes(frame) {
		return nil
	}
	return t.stuck.WriteFrame(frame)
}

func (t *startingTransport) StartFrame(frame []byte) (bool, error) {
	if t.takes(frame) {
		return true, nil
	}
	return t.stuck.StartFrame(frame)
}

func (t *startingTransport) FinishFrame(frame []byte) error { return t.stuck.FinishFrame(frame) }

func (t *startingTransport) Close(code uint32, reason string) { t.stuck.Close(code, reason) }
