package enginetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// markerRepeat is how long PublishMarker waits for its marker before
// publishing it again.
const markerRepeat = 50 * time.Millisecond

// PublishMarker publishes marker on ch through b until rec has it as the
// latest publication on ch, and fails the test if that does not happen
// within the suite's event timeout. Over at-most-once delivery a test
// cannot wait for everything it published; once a marker published after
// everything else has arrived, the rest has arrived or is lost. The
// marker is published again every 50ms because it, too, is lost
// while a connection is down.
func PublishMarker(t testing.TB, b engine.Broker, rec *Recorder, ch, marker string) {
	t.Helper()
	deadline := time.NewTimer(eventTimeout)
	defer deadline.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		_, err := b.Publish(ctx, ch, &engine.Publication{Data: []byte(marker)}, engine.PublishOptions{})
		cancel()
		if err != nil {
			t.Fatalf("publish marker on %s: %v", ch, err)
		}
		repeat := time.NewTimer(markerRepeat)
		for waiting := true; waiting; {
			changed, done := rec.latestIs(ch, marker)
			if done {
				repeat.Stop()
				return
			}
			select {
			case <-changed:
			case <-repeat.C:
				waiting = false
			case <-deadline.C:
				t.Fatalf("marker %q never arrived on %s within %v", marker, ch, eventTimeout)
			}
		}
	}
}

// latestIs reports whether the latest publication on ch carries data, and
// returns the channel that is closed on the recorder's next event.
func (r *Recorder) latestIs(ch, data string) (changed <-chan struct{}, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ds := r.pubs[ch]
	return r.changed, len(ds) > 0 && string(ds[len(ds)-1].pub.Data) == data
}

// CheckAtMostOnce checks deliveries of messages "p/i" that publishers
// goroutines sent, publisher p with rising i, over at-most-once delivery:
// each publisher's messages arrive in the order it sent them and none
// twice, though some may be missing. Deliveries whose data is one of
// markers are passed over. It returns how many "p/i" messages arrived.
func CheckAtMostOnce(t testing.TB, got []Delivery, publishers int, markers ...string) int {
	t.Helper()
	last := make([]int, publishers)
	for p := range last {
		last[p] = -1
	}
	n := 0
	for _, d := range got {
		if slices.Contains(markers, string(d.Pub.Data)) {
			continue
		}
		var p, i int
		if _, err := fmt.Sscanf(string(d.Pub.Data), "%d/%d", &p, &i); err != nil || p < 0 || p >= publishers {
			t.Fatalf("unexpected delivery %q", d.Pub.Data)
		}
		if i <= last[p] {
			t.Fatalf("publisher %d: message %d arrived after %d (duplicate or reordered)", p, i, last[p])
		}
		last[p] = i
		n++
	}
	return n
}

// CheckAcknowledgedOnce checks a node's deliveries on one channel after a
// fault: every acknowledged publication (keyed by its data) came exactly
// once, at the position Publish returned, and in offset order. Deliveries
// of publications that were not acknowledged (whose Publish failed, and
// which may or may not have been committed) are counted, not judged; the
// count is returned.
func CheckAcknowledgedOnce(t testing.TB, node string, got []Delivery, acked map[string]engine.StreamPosition) (others int) {
	t.Helper()
	count := make(map[string]int)
	var last uint64
	for i, d := range got {
		data := string(d.Pub.Data)
		count[data]++
		sp, ok := acked[data]
		if !ok {
			others++
			continue
		}
		if sp != d.Position {
			t.Errorf("%s: %s delivered at %+v, acknowledged at %+v", node, data, d.Position, sp)
		}
		if d.Position.Offset <= last {
			t.Errorf("%s: delivery %d (%s) at offset %d after acknowledged offset %d", node, i, data, d.Position.Offset, last)
		}
		last = d.Position.Offset
	}
	for data := range acked {
		if count[data] != 1 {
			t.Errorf("%s: %s delivered %d times", node, data, count[data])
		}
	}
	return others
}
