package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// drain delivers every event e has now, through fn that collects them.
func drainStates(t *testing.T, e *Engine) []engine.ChannelStateEvent {
	t.Helper()
	var out []engine.ChannelStateEvent
	for {
		n, err := e.DeliverChannelStates(t.Context(), 100, func(_ context.Context, evs []engine.ChannelStateEvent) error {
			out = append(out, evs...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n < 100 {
			return out
		}
	}
}

func eventsOf(evs []engine.ChannelStateEvent, ch string) []string {
	var out []string
	for _, e := range evs {
		if e.Channel == ch {
			out = append(out, e.Type)
		}
	}
	return out
}

// Two nodes in a channel: one occupied event, and one vacated when the
// second leaves, whichever node delivers.
func TestChannelStateTwoNodes(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a := startEngine(t, testOptions(dsn, schema), newRecorder())
	b := startEngine(t, testOptions(dsn, schema), newRecorder())
	ctx := t.Context()
	ch := "state:" + randomToken(4)
	opts := engine.ChannelStateOptions{NodeTTL: time.Minute}
	for _, step := range []struct {
		e  *Engine
		on bool
	}{{a, true}, {b, true}, {a, false}, {a, true}, {a, false}, {b, false}} {
		if err := step.e.SetChannelOccupancy(ctx, ch, step.on, opts); err != nil {
			t.Fatal(err)
		}
	}
	evs := append(drainStates(t, b), drainStates(t, a)...)
	if got := fmt.Sprint(eventsOf(evs, ch)); got != "[occupied vacated]" {
		t.Fatalf("events %v, want [occupied vacated]", got)
	}
	if evs[1].TimeMs <= evs[0].TimeMs {
		t.Errorf("times %d then %d", evs[0].TimeMs, evs[1].TimeMs)
	}
	if again := drainStates(t, a); len(eventsOf(again, ch)) != 0 {
		t.Errorf("delivered again: %v", again)
	}
}

// A failed delivery leaves the events for the next, in order.
func TestChannelStateRedeliver(t *testing.T) {
	dsn := testDSN(t)
	a := startEngine(t, testOptions(dsn, testSchema(t, dsn)), newRecorder())
	ctx := t.Context()
	ch := "state:" + randomToken(4)
	opts := engine.ChannelStateOptions{NodeTTL: time.Minute}
	for _, on := range []bool{true, false, true} {
		if err := a.SetChannelOccupancy(ctx, ch, on, opts); err != nil {
			t.Fatal(err)
		}
	}
	_, err := a.DeliverChannelStates(ctx, 100, func(context.Context, []engine.ChannelStateEvent) error {
		return fmt.Errorf("backend down")
	})
	if err == nil {
		t.Fatal("a failed delivery reported no error")
	}
	if got := fmt.Sprint(eventsOf(drainStates(t, a), ch)); got != "[occupied vacated occupied]" {
		t.Fatalf("events %v", got)
	}
}

// A node that dies (closed without releasing, as after a SIGKILL) stops
// renewing its lease: once it lapses, its channels are vacated after
// their delay by the nodes that remain.
func TestChannelStateNodeDies(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a := startEngine(t, testOptions(dsn, schema), newRecorder())
	b := startEngine(t, testOptions(dsn, schema), newRecorder())
	ctx := t.Context()
	ch, kept := "state:"+randomToken(4), "state:"+randomToken(4)
	short := engine.ChannelStateOptions{NodeTTL: 500 * time.Millisecond, VacatedDelay: 200 * time.Millisecond}
	if err := a.SetChannelOccupancy(ctx, ch, true, short); err != nil {
		t.Fatal(err)
	}
	if err := b.SetChannelOccupancy(ctx, kept, true, engine.ChannelStateOptions{NodeTTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if got := drainStates(t, b); len(got) != 2 {
		t.Fatalf("occupied events %v", got)
	}
	died := time.Now()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	var got []engine.ChannelStateEvent
	testenv.Eventually(t, "the dead node's channel vacated", 10*time.Second, func() bool {
		got = append(got, drainStates(t, b)...)
		return len(got) > 0
	})
	if fmt.Sprint(eventsOf(got, ch)) != "[vacated]" || len(got) != 1 {
		t.Fatalf("events %v, want the dead node's channel vacated and no other", got)
	}
	if took := time.Since(died); took < 700*time.Millisecond {
		t.Errorf("vacated %v after the node died, before its lease and the delay ran out", took)
	}
}

// Nodes joining and leaving one channel at once: the events alternate,
// occupied first and vacated last, each once per change.
func TestChannelStateConcurrent(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	nodes := []*Engine{
		startEngine(t, testOptions(dsn, schema), newRecorder()),
		startEngine(t, testOptions(dsn, schema), newRecorder()),
		startEngine(t, testOptions(dsn, schema), newRecorder()),
	}
	ch := "state:" + randomToken(4)
	opts := engine.ChannelStateOptions{NodeTTL: time.Minute}
	var wg sync.WaitGroup
	errs := make(chan error, len(nodes))
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				if err := n.SetChannelOccupancy(context.Background(), ch, i%2 == 0, opts); err != nil {
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
	evs := drainStates(t, nodes[0])
	types := eventsOf(evs, ch)
	if len(types) == 0 || len(types)%2 != 0 {
		t.Fatalf("events %v: want pairs", types)
	}
	for i, typ := range types {
		want := engine.ChannelOccupied
		if i%2 == 1 {
			want = engine.ChannelVacated
		}
		if typ != want {
			t.Fatalf("event %d is %s: %v", i, typ, types)
		}
		if i > 0 && evs[i].TimeMs <= evs[i-1].TimeMs {
			t.Fatalf("event %d not after the one before", i)
		}
	}
}
