package enginetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// channelStates checks an engine's ChannelStates: one occupied and one
// vacated event per change of a channel, however many nodes take part,
// in order, redelivered after a failure; on a cluster, a node that dies
// without releasing loses its channels when its lease lapses.
func (s *suite) channelStates(t *testing.T) {
	t.Run("Nodes", s.testChannelStateNodes)
	t.Run("VacatedDelay", s.testChannelStateDelay)
	t.Run("Redeliver", s.testChannelStateRedeliver)
	t.Run("Concurrent", s.testChannelStateConcurrent)
	t.Run("NodeDies", func(t *testing.T) {
		if !s.caps.Cluster {
			t.Skip("engine is single-node")
		}
		s.testChannelStateNodeDies(t)
	})
}

func channelStatesOf(t *testing.T, n *node) engine.ChannelStates {
	t.Helper()
	cs, ok := engine.ChannelStatesOf(n.Engine)
	if !ok {
		t.Fatalf("%T claims Capabilities.ChannelStates but engine.ChannelStatesOf finds none in it", n.Engine)
	}
	return cs
}

// stateNodes returns n nodes of one cluster, or one node n times for a
// single-node engine (whose occupancy counts calls, not nodes).
func (s *suite) stateNodes(t *testing.T, n int) []engine.ChannelStates {
	t.Helper()
	out := make([]engine.ChannelStates, n)
	for i := range out {
		if i > 0 && !s.caps.Cluster {
			out[i] = out[0]
			continue
		}
		out[i] = channelStatesOf(t, s.start(t))
	}
	return out
}

// drainStates delivers every event cs has now and returns those of the
// channels named.
func drainStates(t *testing.T, cs engine.ChannelStates, chans ...string) []engine.ChannelStateEvent {
	t.Helper()
	var out []engine.ChannelStateEvent
	for {
		n, err := cs.DeliverChannelStates(ctx(t), 100, func(_ context.Context, evs []engine.ChannelStateEvent) error {
			for _, e := range evs {
				for _, ch := range chans {
					if e.Channel == ch {
						out = append(out, e)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("DeliverChannelStates: %v", err)
		}
		if n < 100 {
			return out
		}
	}
}

// stateTypes is evs as "type channel" words, checking times increase
// per channel.
func stateTypes(t *testing.T, evs []engine.ChannelStateEvent) string {
	t.Helper()
	last := map[string]int64{}
	var out []string
	for _, e := range evs {
		if e.TimeMs <= last[e.Channel] {
			t.Errorf("%s %s at %d, not after the channel's previous event (%d)", e.Type, e.Channel, e.TimeMs, last[e.Channel])
		}
		last[e.Channel] = e.TimeMs
		out = append(out, e.Type)
	}
	return strings.Join(out, " ")
}

func setOccupancy(t *testing.T, cs engine.ChannelStates, ch string, on bool, opts engine.ChannelStateOptions) {
	t.Helper()
	if err := cs.SetChannelOccupancy(ctx(t), ch, on, opts); err != nil {
		t.Fatalf("SetChannelOccupancy(%s, %v): %v", ch, on, err)
	}
}

var stateNow = engine.ChannelStateOptions{NodeTTL: time.Minute}

func (s *suite) testChannelStateNodes(t *testing.T) {
	ns := s.stateNodes(t, 2)
	a, b := ns[0], ns[1]
	ch := channel(t, "state")
	for _, step := range []struct {
		cs engine.ChannelStates
		on bool
	}{{a, true}, {b, true}, {a, false}, {a, true}, {a, false}, {b, false}} {
		setOccupancy(t, step.cs, ch, step.on, stateNow)
	}
	evs := append(drainStates(t, b, ch), drainStates(t, a, ch)...)
	if got := stateTypes(t, evs); got != "occupied vacated" {
		t.Fatalf("events %q, want occupied vacated", got)
	}
	if again := drainStates(t, a, ch); len(again) != 0 {
		t.Errorf("delivered again: %v", again)
	}
	// Again, later: a new occupied event, after the vacated one.
	setOccupancy(t, b, ch, true, stateNow)
	more := drainStates(t, a, ch)
	if got := stateTypes(t, append(evs, more...)); got != "occupied vacated occupied" {
		t.Fatalf("events %q", got)
	}
	setOccupancy(t, b, ch, false, stateNow)
}

// A subscriber back within the delay cancels the vacated event; the
// next one comes once the delay has run out.
func (s *suite) testChannelStateDelay(t *testing.T) {
	cs := s.stateNodes(t, 1)[0]
	ch := channel(t, "state")
	const delay = 300 * time.Millisecond
	opts := engine.ChannelStateOptions{NodeTTL: time.Minute, VacatedDelay: delay}
	setOccupancy(t, cs, ch, true, opts)
	setOccupancy(t, cs, ch, false, opts)
	setOccupancy(t, cs, ch, true, opts)
	// The engine dates the leave while the call runs, so the delay is
	// measured from before the call: taken after it returns, a slow
	// round trip made the vacated look early by that round trip.
	left := time.Now()
	setOccupancy(t, cs, ch, false, opts)
	var evs []engine.ChannelStateEvent
	eventually(t, "the vacated event", eventTimeout, func() bool {
		evs = append(evs, drainStates(t, cs, ch)...)
		return len(evs) >= 2
	})
	if got := stateTypes(t, evs); got != "occupied vacated" {
		t.Fatalf("events %q, want occupied vacated", got)
	}
	if took := time.Since(left); took < delay {
		t.Errorf("vacated after %v, before the delay %v", took, delay)
	}
}

func (s *suite) testChannelStateRedeliver(t *testing.T) {
	cs := s.stateNodes(t, 1)[0]
	ch := channel(t, "state")
	for _, on := range []bool{true, false, true} {
		setOccupancy(t, cs, ch, on, stateNow)
	}
	failed := errors.New("backend down")
	if _, err := cs.DeliverChannelStates(ctx(t), 100, func(context.Context, []engine.ChannelStateEvent) error { return failed }); !errors.Is(err, failed) {
		t.Fatalf("a failed delivery returned %v", err)
	}
	if got := stateTypes(t, drainStates(t, cs, ch)); got != "occupied vacated occupied" {
		t.Fatalf("events %q", got)
	}
	setOccupancy(t, cs, ch, false, stateNow)
}

// Nodes joining and leaving one channel at once: the events alternate,
// occupied first and vacated last.
func (s *suite) testChannelStateConcurrent(t *testing.T) {
	ns := s.stateNodes(t, 3)
	ch := channel(t, "state")
	var wg sync.WaitGroup
	errs := make(chan error, len(ns))
	for _, n := range ns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				if err := n.SetChannelOccupancy(context.Background(), ch, i%2 == 0, stateNow); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := strings.Fields(stateTypes(t, drainStates(t, ns[0], ch)))
	if len(got) == 0 || len(got)%2 != 0 {
		t.Fatalf("events %v: want pairs", got)
	}
	for i, typ := range got {
		want := engine.ChannelOccupied
		if i%2 == 1 {
			want = engine.ChannelVacated
		}
		if typ != want {
			t.Fatalf("event %d is %s: %v", i, typ, got)
		}
	}
}

// A node closed without releasing (as after a SIGKILL) stops renewing its
// lease: once it lapses, its channels are vacated after their delay by
// the nodes that remain, and the others' are kept.
func (s *suite) testChannelStateNodeDies(t *testing.T) {
	dying := s.newEngine(t)
	closeAtEnd(t, dying)
	a := channelStatesOf(t, startNode(t, dying))
	b := channelStatesOf(t, s.start(t))
	ch, kept := channel(t, "state"), channel(t, "kept")
	short := engine.ChannelStateOptions{NodeTTL: 500 * time.Millisecond, VacatedDelay: 200 * time.Millisecond}
	leased := time.Now() // the lease starts at a's first record
	setOccupancy(t, a, ch, true, short)
	setOccupancy(t, b, kept, true, stateNow)
	if got := drainStates(t, b, ch, kept); len(got) != 2 {
		t.Fatalf("occupied events %v", got)
	}
	if err := dying.Close(); err != nil {
		t.Fatal(err)
	}
	var got []engine.ChannelStateEvent
	eventually(t, "the dead node's channel vacated", eventTimeout, func() bool {
		got = append(got, drainStates(t, b, ch, kept)...)
		return len(got) > 0
	})
	if len(got) != 1 || got[0].Channel != ch || got[0].Type != engine.ChannelVacated {
		t.Fatalf("events %v, want the dead node's channel vacated and no other", got)
	}
	// 650 rather than 700: the engine's clock counts whole milliseconds.
	if took := time.Since(leased); took < 650*time.Millisecond {
		t.Errorf("vacated %v after the node's lease began, before the lease and the delay ran out", took)
	}
	setOccupancy(t, b, kept, false, stateNow)
}
