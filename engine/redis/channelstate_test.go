package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
)

// Each partition's stream keeps its share of MaxQueue: the oldest events
// go, new ones are kept, and the drops are counted. An event dropped
// while a delivery carries it (here by another node's change) counts
// only if that delivery fails: otherwise it reached the backend.
func TestChannelStateQueueBounded(t *testing.T) {
	opts := testOptions(t)
	e := startEngine(t, opts, enginetest.NewRecorder())
	other := opts
	other.NodeID = "other-node"
	e2 := startEngine(t, other, enginetest.NewRecorder())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Five channels of one partition, whose share of a bound of 32 is 2.
	var chans []string
	for i := 0; len(chans) < 10; i++ {
		if ch := fmt.Sprintf("ch%d", i); e.channelStatePartition(ch) == 0 {
			chans = append(chans, ch)
		}
	}
	csOpts := engine.ChannelStateOptions{NodeTTL: time.Minute, MaxQueue: 2 * channelStatePartitions}
	occupy := func(on *Engine, chans ...string) {
		t.Helper()
		for _, ch := range chans {
			if err := on.SetChannelOccupancy(ctx, ch, true, csOpts); err != nil {
				t.Fatal(err)
			}
		}
	}
	occupy(e, chans[:5]...)
	if got := e.ChannelStateEventsDropped(); got != 3 {
		t.Errorf("dropped %d, want 3", got)
	}
	// deliver runs a delivery on node `on`, calling during (when set)
	// from within it and returning its error, and names the channels
	// the batch carried.
	deliver := func(on *Engine, during func() error) (string, error) {
		t.Helper()
		var got []string
		_, err := on.DeliverChannelStates(ctx, 100, func(_ context.Context, evs []engine.ChannelStateEvent) error {
			for _, ev := range evs {
				got = append(got, ev.Channel)
			}
			if during != nil {
				return during()
			}
			return nil
		})
		return strings.Join(got, " "), err
	}

	// Another node's changes drop both events of the batch in flight,
	// which then succeeds.
	got, err := deliver(e, func() error { occupy(e2, chans[5:7]...); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(chans[3:5], " "); got != want {
		t.Errorf("delivered %q, want the newest two, %s", got, want)
	}
	if d1, d2 := e.ChannelStateEventsDropped(), e2.ChannelStateEventsDropped(); d1 != 3 || d2 != 0 {
		t.Errorf("dropped %d and %d after two events were dropped in a delivery that succeeded, want 3 and 0", d1, d2)
	}

	// Now the batch in flight (the other node's two) fails, and a third
	// change drops one of it: that one is lost, and counted.
	got, err = deliver(e, func() error { occupy(e2, chans[7]); return errors.New("backend down") })
	if err == nil {
		t.Fatal("a failed delivery returned no error")
	}
	if want := strings.Join(chans[5:7], " "); got != want {
		t.Errorf("failing batch %q, want %s", got, want)
	}
	if d1, d2 := e.ChannelStateEventsDropped(), e2.ChannelStateEventsDropped(); d1+d2 != 4 {
		t.Errorf("dropped %d and %d after an event was dropped in a delivery that failed, want 4 in all", d1, d2)
	}
	got, err = deliver(e2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(chans[6:8], " "); got != want {
		t.Errorf("after the failure delivered %q, want %s", got, want)
	}
}
