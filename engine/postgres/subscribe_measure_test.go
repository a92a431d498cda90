package postgres

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// TestMeasureSubscribePosition times what a first subscriber of a channel
// costs the engine before its reply can be written: Subscribe and then
// History with Limit 0 (two round trips, as the hub did), against
// SubscribePosition (one, without waiting for a disk flush). Each sample
// is a channel no node subscribed to yet, new or with 3 publications;
// the two ways alternate so that load on the machine falls on both alike. It runs only with
// HERALD_TEST_MEASURE=1 and logs the figures (-v).
func TestMeasureSubscribePosition(t *testing.T) {
	if os.Getenv("HERALD_TEST_MEASURE") != "1" {
		t.Skip("a measurement: set HERALD_TEST_MEASURE=1 and run with -v")
	}
	dsn := testDSN(t)
	e := startEngine(t, testOptions(dsn, testSchema(t, dsn)), newRecorder())
	ctx := t.Context()
	const samples = 200
	hist := engine.PublishOptions{HistorySize: 10, HistoryTTL: time.Minute}
	// A channel without a stream yet (its position is written: the
	// first subscriber of a new channel, as in centrifuge-python's
	// TestAutoRecovery) and one with 3 publications (read only).
	for _, pubs := range []int{0, 3} {
		var apart, together []time.Duration
		for i := range 2 * samples {
			ch := fmt.Sprintf("measure:%d:%d", pubs, i)
			for range pubs {
				if _, err := e.Publish(ctx, ch, &engine.Publication{Data: []byte(`{}`)}, hist); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			if i%2 == 0 {
				if err := e.Subscribe(ctx, ch); err != nil {
					t.Fatal(err)
				}
				if _, _, err := e.History(ctx, ch, engine.HistoryRequest{}); err != nil {
					t.Fatal(err)
				}
				apart = append(apart, time.Since(start))
			} else {
				if _, err := e.SubscribePosition(ctx, ch, 0); err != nil {
					t.Fatal(err)
				}
				together = append(together, time.Since(start))
			}
		}
		t.Logf("first subscribe with its position, %d channels each with %d publications: Subscribe then History %s; SubscribePosition %s",
			samples, pubs, quantiles(apart), quantiles(together))
	}
}

// quantiles describes measured durations.
func quantiles(d []time.Duration) string {
	slices.Sort(d)
	q := func(p float64) time.Duration { return d[int(p*float64(len(d)-1))].Round(10 * time.Microsecond) }
	return fmt.Sprintf("p50 %v, p90 %v, p99 %v, max %v", q(0.5), q(0.9), q(0.99), d[len(d)-1].Round(10*time.Microsecond))
}

// TestMeasurePresenceJoin times a subscriber's announcement, which the
// connection's next command waits for: AddPresence then PublishJoin (as
// the hub did) against AddPresenceJoin, alternating. It runs only with
// HERALD_TEST_MEASURE=1 and logs the figures (-v).
func TestMeasurePresenceJoin(t *testing.T) {
	if os.Getenv("HERALD_TEST_MEASURE") != "1" {
		t.Skip("a measurement: set HERALD_TEST_MEASURE=1 and run with -v")
	}
	dsn := testDSN(t)
	e := startEngine(t, testOptions(dsn, testSchema(t, dsn)), newRecorder())
	ctx := t.Context()
	const samples = 200
	var apart, together []time.Duration
	for i := range 2 * samples {
		ch := fmt.Sprintf("measure:%d", i)
		info := &engine.ClientInfo{User: "u", Client: fmt.Sprintf("c%d", i)}
		start := time.Now()
		if i%2 == 0 {
			if err := e.AddPresence(ctx, ch, info, time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := e.PublishJoin(ctx, ch, info); err != nil {
				t.Fatal(err)
			}
			apart = append(apart, time.Since(start))
		} else {
			if err := e.AddPresenceJoin(ctx, ch, info, time.Minute); err != nil {
				t.Fatal(err)
			}
			together = append(together, time.Since(start))
		}
	}
	t.Logf("presence and join, %d each: AddPresence then PublishJoin %s; AddPresenceJoin %s", samples, quantiles(apart), quantiles(together))
}
