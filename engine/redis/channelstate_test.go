package redis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
)

// Each partition's stream keeps its share of MaxQueue: the oldest events
// go, new ones are kept, and the drops are counted.
func TestChannelStateQueueBounded(t *testing.T) {
	e := startEngine(t, testOptions(t), enginetest.NewRecorder())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Five channels of one partition, whose share of a bound of 32 is 2.
	var chans []string
	for i := 0; len(chans) < 5; i++ {
		if ch := fmt.Sprintf("ch%d", i); e.channelStatePartition(ch) == 0 {
			chans = append(chans, ch)
		}
	}
	opts := engine.ChannelStateOptions{NodeTTL: time.Minute, MaxQueue: 2 * channelStatePartitions}
	for _, ch := range chans {
		if err := e.SetChannelOccupancy(ctx, ch, true, opts); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.ChannelStateEventsDropped(); got != 3 {
		t.Errorf("dropped %d, want 3", got)
	}
	var got []string
	if _, err := e.DeliverChannelStates(ctx, 100, func(_ context.Context, evs []engine.ChannelStateEvent) error {
		for _, ev := range evs {
			got = append(got, ev.Channel)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(chans[3:], " "); strings.Join(got, " ") != want {
		t.Errorf("delivered %v, want the newest two, %s", got, want)
	}
}
