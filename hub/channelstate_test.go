package hub_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/transport/websocket"
)

// stateEvents records the channel state events a node delivers.
type stateEvents chan hub.ChannelStateEvent

func (s stateEvents) handler(_ context.Context, evs []hub.ChannelStateEvent) error {
	for _, e := range evs {
		s <- e
	}
	return nil
}

// next returns the next event, failing after 10s.
func (s stateEvents) next(t *testing.T) hub.ChannelStateEvent {
	t.Helper()
	return recv(t, s, "a channel state event")
}

// eventName is how the tests name an event: "type channel".
func eventName(e hub.ChannelStateEvent) string { return e.Type + " " + e.Channel }

// expect reads the next events and checks them against want, given as
// "type channel" (eventName).
func (s stateEvents) expect(t *testing.T, want ...string) []hub.ChannelStateEvent {
	t.Helper()
	var got []hub.ChannelStateEvent
	for _, w := range want {
		e := s.next(t)
		got = append(got, e)
		if g := eventName(e); g != w {
			t.Fatalf("event %d: got %q, want %q (so far %+v)", len(got), g, w, got)
		}
	}
	return got
}

// expectAnyOrder reads len(want) events and checks that they are want in
// some order: events of different channels keep no order between them.
func (s stateEvents) expectAnyOrder(t *testing.T, want ...string) {
	t.Helper()
	left := map[string]int{}
	for _, w := range want {
		left[w]++
	}
	var got []string
	for range want {
		e := s.next(t)
		g := eventName(e)
		got = append(got, g)
		if left[g] == 0 {
			t.Fatalf("got %q, want %v in any order (so far %v)", g, want, got)
		}
		left[g]--
	}
}

func stateChannels(delay time.Duration) hub.ChannelConfig {
	open := hub.NamespaceOptions{AllowSubscribeForClient: true}
	withState := open
	withState.StateEvents = true
	return hub.ChannelConfig{
		WithoutNamespace: open,
		Namespaces:       []hub.Namespace{{Name: "chat", NamespaceOptions: withState}},
		State:            hub.ChannelStateConfig{VacatedEventDelay: delay},
	}
}

func unsubscribe(c *rawClient, id int, ch string) {
	c.Send(fmt.Sprintf(`{"id":%d,"unsubscribe":{"channel":%q}}`, id, ch))
	c.Reply(id)
}

// The first subscriber of a channel makes one occupied event however many
// follow; the last one gone makes one vacated event, after the delay.
// Channels of namespaces without state_proxy_enabled make none.
func TestChannelStateOccupiedVacated(t *testing.T) {
	evs := make(stateEvents, 64)
	n := startNodeWS(t, hub.Config{Channels: stateChannels(-1), Handlers: hub.Handlers{OnChannelState: evs.handler}}, websocket.Config{})
	a, b := n.dial(t), n.dial(t)
	a.Connect("u1")
	b.Connect("u2")
	a.MustSubscribe(2, "plain", "")
	a.MustSubscribe(3, "chat:1", "")
	got := evs.expect(t, "occupied chat:1")
	b.MustSubscribe(2, "chat:1", "")
	unsubscribe(a, 4, "chat:1")
	unsubscribe(a, 5, "plain")
	unsubscribe(b, 3, "chat:1")
	got = append(got, evs.expect(t, "vacated chat:1")...)
	// The next occupied of the channel comes after, with a later time.
	a.MustSubscribe(6, "chat:1", "")
	got = append(got, evs.expect(t, "occupied chat:1")...)
	for i := 1; i < len(got); i++ {
		if got[i].TimeMs <= got[i-1].TimeMs {
			t.Errorf("event %d at %d, not after the one before (%d)", i, got[i].TimeMs, got[i-1].TimeMs)
		}
	}
}

// A subscriber that comes back within the vacated delay cancels the
// vacated event, and makes no second occupied.
func TestChannelStateVacatedDelay(t *testing.T) {
	evs := make(stateEvents, 64)
	const delay = 300 * time.Millisecond
	n := startNodeWS(t, hub.Config{Channels: stateChannels(delay), Handlers: hub.Handlers{OnChannelState: evs.handler}}, websocket.Config{})
	a := n.dial(t)
	a.Connect("u1")
	a.MustSubscribe(2, "chat:1", "")
	evs.expect(t, "occupied chat:1")
	unsubscribe(a, 3, "chat:1")
	a.MustSubscribe(4, "chat:1", "")
	left := time.Now()
	unsubscribe(a, 5, "chat:1")
	// Had the first unsubscribe made a vacated event, it would come
	// here, before the vacated of the second.
	e := evs.expect(t, "vacated chat:1")[0]
	if took := time.Since(left); took < delay {
		t.Errorf("vacated %v after the last subscriber left, before the delay %v", took, delay)
	}
	if e.TimeMs < left.Add(delay).UnixMilli()-1 {
		t.Errorf("vacated event time %d before the delay ran out (%d)", e.TimeMs, left.Add(delay).UnixMilli())
	}
}

// A delivery that fails is retried with the same events, in order.
// Events are in order per channel only, and a node records a channel's
// occupancy in the background: the test waits for the handler to have
// been offered each change before it makes the next, so that the
// engine's order is the one it expects.
func TestChannelStateRetry(t *testing.T) {
	evs := make(stateEvents, 64)
	offered := make(chan []string, 64) // every batch the handler was given, failed or not
	var fails atomic.Int32
	fails.Store(2)
	handler := func(ctx context.Context, batch []hub.ChannelStateEvent) error {
		if len(batch) == 0 {
			return nil // nothing to refuse
		}
		names := make([]string, len(batch))
		for i, e := range batch {
			names[i] = eventName(e)
		}
		offered <- names
		if fails.Add(-1) >= 0 {
			return errors.New("backend down")
		}
		return evs.handler(ctx, batch)
	}
	// offeredUntil reads the batches offered, into batches, until one
	// holds want.
	var batches [][]string
	offeredUntil := func(want string) {
		t.Helper()
		for {
			b := recv(t, offered, "a batch holding "+want)
			batches = append(batches, b)
			for _, name := range b {
				if name == want {
					return
				}
			}
		}
	}
	n := startNodeWS(t, hub.Config{Channels: stateChannels(-1), Handlers: hub.Handlers{OnChannelState: handler}}, websocket.Config{})
	a := n.dial(t)
	a.Connect("u1")
	a.MustSubscribe(2, "chat:1", "")
	offeredUntil("occupied chat:1")
	unsubscribe(a, 3, "chat:1")
	offeredUntil("vacated chat:1")
	a.MustSubscribe(4, "chat:2", "")
	offeredUntil("occupied chat:2")
	want := []string{"occupied chat:1", "vacated chat:1", "occupied chat:2"}
	evs.expect(t, want...)
	// The two refused batches and the first one delivered all began
	// with the first event: a retry offers the same events again.
	if len(batches) < 3 {
		t.Fatalf("%d batches offered, want at least the 2 refused and 1 delivered: %v", len(batches), batches)
	}
	for i, b := range batches[:3] {
		if b[0] != want[0] {
			t.Errorf("batch %d is %v, want it to begin with %q", i+1, b, want[0])
		}
	}
}

// A disconnect counts as leaving every channel; a node that stops
// releases its channels, which are then vacated.
func TestChannelStateDisconnect(t *testing.T) {
	evs := make(stateEvents, 64)
	n := startNodeWS(t, hub.Config{Channels: stateChannels(-1), Handlers: hub.Handlers{OnChannelState: evs.handler}}, websocket.Config{})
	a := n.dial(t)
	a.Connect("u1")
	a.MustSubscribe(2, "chat:1", "")
	a.MustSubscribe(3, "chat:2", "")
	evs.expectAnyOrder(t, "occupied chat:1", "occupied chat:2")
	a.Drop()
	evs.expectAnyOrder(t, "vacated chat:1", "vacated chat:2")
}

// Without a handler, or on an engine that keeps no occupancy, the hub
// refuses a namespace with state events.
func TestChannelStateNeedsHandler(t *testing.T) {
	_, err := hub.New(withTestDefaults(t, hub.Config{Channels: stateChannels(0)}))
	if err == nil {
		t.Fatal("a namespace with state events and no OnChannelState was accepted")
	}
}

// Chain gives channel state events to every set that takes them; an error
// stops the rest, so the events come again to every set.
func TestChainChannelState(t *testing.T) {
	var got []string
	fail := true
	first := hub.Handlers{OnChannelState: func(_ context.Context, evs []hub.ChannelStateEvent) error {
		got = append(got, "first")
		if fail {
			fail = false
			return errors.New("down")
		}
		return nil
	}}
	second := hub.Handlers{OnChannelState: func(_ context.Context, evs []hub.ChannelStateEvent) error {
		got = append(got, "second")
		return nil
	}}
	h := hub.Chain(first, hub.Handlers{}, second)
	evs := []hub.ChannelStateEvent{{Channel: "chat:1", Type: hub.ChannelOccupied, TimeMs: 1}}
	if err := h.OnChannelState(context.Background(), evs); err == nil {
		t.Fatal("the first set's error was not returned")
	}
	if err := h.OnChannelState(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[first first second]" {
		t.Fatalf("calls %v", got)
	}
}

// lapsingEngine is the memory engine whose first lease renewal reports
// the lease lapsed, and which reports every occupancy it records.
type lapsingEngine struct {
	*memory.Engine
	lapsed atomic.Bool
	sets   chan string
}

func (e *lapsingEngine) KeepChannelOccupancy(ctx context.Context, ttl time.Duration) (bool, error) {
	if _, err := e.Engine.KeepChannelOccupancy(ctx, ttl); err != nil {
		return false, err
	}
	return e.lapsed.CompareAndSwap(false, true), nil
}

func (e *lapsingEngine) SetChannelOccupancy(ctx context.Context, ch string, on bool, opts engine.ChannelStateOptions) error {
	e.sets <- fmt.Sprintf("%s %v", ch, on)
	return e.Engine.SetChannelOccupancy(ctx, ch, on, opts)
}

// A node whose lease lapsed (the engine dropped its records) records its
// channels again.
func TestChannelStateLeaseLapsed(t *testing.T) {
	evs := make(stateEvents, 64)
	eng := &lapsingEngine{Engine: memory.New(memory.Config{}), sets: make(chan string, 16)}
	cfg := stateChannels(-1)
	cfg.State.NodeTTL = 3 * time.Second // renewed every second
	n := startNodeWS(t, hub.Config{Engine: eng, Channels: cfg, Handlers: hub.Handlers{OnChannelState: evs.handler}}, websocket.Config{})
	a := n.dial(t)
	a.Connect("u1")
	a.MustSubscribe(2, "chat:1", "")
	if got := recv(t, eng.sets, "the first record"); got != "chat:1 true" {
		t.Fatalf("recorded %q", got)
	}
	if got := recv(t, eng.sets, "the record made again after the lapse"); got != "chat:1 true" {
		t.Fatalf("recorded %q", got)
	}
}

// keepRecorder is the memory engine that records when the lease is
// renewed, and whose first deliveries fail as a database's would.
type keepRecorder struct {
	*memory.Engine
	keeps chan time.Time
	fails atomic.Int32
}

func (e *keepRecorder) KeepChannelOccupancy(ctx context.Context, ttl time.Duration) (bool, error) {
	select {
	case e.keeps <- time.Now():
	default:
	}
	return e.Engine.KeepChannelOccupancy(ctx, ttl)
}

func (e *keepRecorder) DeliverChannelStates(ctx context.Context, limit int, fn func(context.Context, []engine.ChannelStateEvent) error) (int, error) {
	if e.fails.Add(-1) >= 0 {
		return 0, errors.New("database unavailable")
	}
	return e.Engine.DeliverChannelStates(ctx, limit, fn)
}

// The lease is renewed every third of node_ttl, so that a busy node has
// two thirds of it to spare: on a one-second tick a lease of 3 s was
// renewed every 2 s.
func TestChannelStateLeaseRenewedEveryThird(t *testing.T) {
	eng := &keepRecorder{Engine: memory.New(memory.Config{}), keeps: make(chan time.Time, 16)}
	cfg := stateChannels(-1)
	cfg.State.NodeTTL = 3 * time.Second
	startNodeWS(t, hub.Config{Engine: eng, Channels: cfg, Handlers: hub.Handlers{OnChannelState: make(stateEvents, 64).handler}}, websocket.Config{})
	prev := recv(t, eng.keeps, "a lease renewal")
	for i := range 3 {
		at := recv(t, eng.keeps, "a lease renewal")
		// A third is 1 s; a sixth more is the tick; the rest is slack for
		// a busy machine, short of the 2 s the one-second tick gave.
		if gap := at.Sub(prev); gap > 1900*time.Millisecond {
			t.Errorf("renewal %d came %v after the previous one, want at most about 1.5s of a 3s lease", i+2, gap)
		}
		prev = at
	}
}

// Failures of the engine (not of the handler) are retried within a
// second, so a vacated or occupied event is late by at most about that
// once the database is back, not by the handler's backoff of up to 10 s.
func TestChannelStateEngineErrorRetriedSoon(t *testing.T) {
	evs := make(stateEvents, 64)
	eng := &keepRecorder{Engine: memory.New(memory.Config{}), keeps: make(chan time.Time, 1)}
	// Six failures: 0.2+0.4+0.8+1.6+3.2+6.4 s (at least half of it with
	// jitter) under the handler's backoff, 0.2+0.4+0.8+1+1+1 s under the
	// engine's.
	eng.fails.Store(6)
	n := startNodeWS(t, hub.Config{Engine: eng, Channels: stateChannels(-1), Handlers: hub.Handlers{OnChannelState: evs.handler}}, websocket.Config{})
	a := n.dial(t)
	a.Connect("u1")
	start := time.Now()
	a.MustSubscribe(2, "chat:1", "")
	evs.expect(t, "occupied chat:1")
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("occupied %v after the subscribe, past the engine's retries", took)
	}
	if left := eng.fails.Load(); left >= 0 {
		t.Errorf("%d engine failures left, want all 6 taken", left+1)
	}
}

// occupancyRecorder is the memory engine telling each channel whose
// occupancy it recorded, after recording it; as keepRecorder, it does not
// wait for the test to read (a full channel would hold the hub's record
// goroutine, and its shutdown, for ever), so recorded is buffered beyond
// what a test records.
type occupancyRecorder struct {
	*memory.Engine
	recorded chan string
}

func (e *occupancyRecorder) SetChannelOccupancy(ctx context.Context, ch string, on bool, opts engine.ChannelStateOptions) error {
	err := e.Engine.SetChannelOccupancy(ctx, ch, on, opts)
	select {
	case e.recorded <- ch:
	default:
	}
	return err
}

// While the backend is down, the queue keeps the newest queue_size
// events: the older ones are dropped and counted, and the backend, back,
// gets the rest in order.
//
// The hub records each channel's occupancy from a goroutine of its own,
// so the test waits for each record before the next subscribe (the
// queue's order is the engine's, not the subscribes'). And a delivery
// that began before the last drops carries events the queue has since
// dropped: the backend comes back only once a failed delivery carried
// exactly the two newest, after which nothing else is in flight.
func TestChannelStateQueueBounded(t *testing.T) {
	evs := make(stateEvents, 64)
	var down atomic.Bool
	down.Store(true)
	failed := make(chan string, 64) // the channels of each failed delivery
	handler := func(ctx context.Context, batch []hub.ChannelStateEvent) error {
		if down.Load() {
			var chs []string
			for _, e := range batch {
				chs = append(chs, e.Channel)
			}
			select {
			case failed <- strings.Join(chs, " "):
			default:
			}
			return errors.New("backend down")
		}
		return evs.handler(ctx, batch)
	}
	cfg := stateChannels(-1)
	cfg.State.QueueSize = 2
	eng := &occupancyRecorder{Engine: memory.New(memory.Config{}), recorded: make(chan string, 16)}
	n := startNodeWS(t, hub.Config{Engine: eng, Channels: cfg, Handlers: hub.Handlers{OnChannelState: handler}}, websocket.Config{})
	a := n.dial(t)
	a.Connect("u1")
	for i := range 4 {
		ch := fmt.Sprintf("chat:%d", i)
		a.MustSubscribe(2+i, ch, "")
		if got := recv(t, eng.recorded, "the occupancy of "+ch); got != ch {
			t.Fatalf("recorded %s after subscribing to %s", got, ch)
		}
	}
	if got := counterValue(t, n.hub, "herald_channel_state_events_dropped_total", "", ""); got != 2 {
		t.Fatalf("dropped %v of 4 events with a queue of 2, want 2", got)
	}
	for {
		if recv(t, failed, "a failed delivery") == "chat:2 chat:3" {
			break
		}
	}
	down.Store(false)
	evs.expect(t, "occupied chat:2", "occupied chat:3")
	if got := counterValue(t, n.hub, "herald_channel_state_events_dropped_total", "", ""); got != 2 {
		t.Errorf("dropped %v, want 2", got)
	}
}
