package enginetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// The Reconnect test's stream: reconnectTotal messages "p/i" from
// reconnectPublishers goroutines, publisher p sending i = p, p+publishers,
// and so on. The connection breaks reconnectBreaks times, at even parts
// of the stream.
const (
	reconnectTotal      = 2000
	reconnectPublishers = 4
	reconnectBreaks     = 3
	// reconnectPart is how many messages are published between breaks.
	reconnectPart = reconnectTotal / (reconnectBreaks + 1)
	// streamTimeout bounds the stream and the wait for the end of its
	// history: a stream over a network under the race detector, with its
	// replays, takes far longer than one event.
	streamTimeout = 2 * time.Minute
)

// reconnectEnd is the last message on each channel of the Reconnect test.
const reconnectEnd = "end"

// reconnect checks delivery across breaks of the connection a node
// receives on. While node a streams to a history channel and a plain one,
// node b's connection breaks three times. The history channel must
// still deliver every offset exactly once and in order; the plain one is
// at most once: nothing twice, each publisher's messages in order.
func (s *suite) reconnect(t *testing.T) {
	ea, eb, breakConn := s.caps.Faulty(t)
	closeAtEnd(t, ea)
	closeAtEnd(t, eb)
	a, b := startNode(t, ea), startNode(t, eb)
	rec := &Recorder{b.rec}
	st := &stream{a: a, plain: channel(t, "plain")}
	probe := channel(t, "probe")
	b.subscribe(t, st.plain, probe)
	if s.caps.History {
		st.hist = channel(t, "hist")
		b.subscribe(t, st.hist)
	}

	st.run(t, func(k int) {
		breakConn()
		// Wait until delivery resumes, so that each break finds a
		// working connection and the stream goes on over it.
		PublishMarker(t, a, rec, probe, fmt.Sprintf("resumed %d", k+1))
	})
	if t.Failed() {
		return
	}

	if st.hist != "" {
		checkHistoryStream(t, a, b, st.hist)
	}
	PublishMarker(t, a, rec, st.plain, reconnectEnd)
	got := CheckAtMostOnce(t, rec.Publications(st.plain), reconnectPublishers, reconnectEnd)
	t.Logf("plain channel delivered %d of %d publications across %d breaks", got, reconnectTotal, reconnectBreaks)
}

// stream publishes the Reconnect test's messages from node a.
type stream struct {
	a           *node
	hist, plain string // hist is "" for engines without history
	sent        atomic.Int64
	// reached[k] is closed once k+1 parts are published, resumed[k] once
	// break k is over.
	reached, resumed [reconnectBreaks]chan struct{}
}

// run publishes the stream and calls fault(k) on the test's goroutine
// once k+1 parts are published, for every break k. Publishers go on
// during a fault for at most half a part and publish the other half only
// once it is over, so that however fast an engine publishes, each fault
// finds the stream flowing and is followed by publications over the
// restored connection.
func (st *stream) run(t *testing.T, fault func(k int)) {
	t.Helper()
	for k := range reconnectBreaks {
		st.reached[k], st.resumed[k] = make(chan struct{}), make(chan struct{})
	}
	ctx, cancel := context.WithTimeout(t.Context(), streamTimeout)
	var wg sync.WaitGroup
	// On any exit, a fatal failure included, stop the publishers first.
	defer wg.Wait()
	defer cancel()
	for p := range reconnectPublishers {
		wg.Go(func() {
			if err := st.publish(ctx, p); err != nil {
				t.Errorf("publisher %d: %v", p, err)
				cancel()
			}
		})
	}
	for k := range reconnectBreaks {
		select {
		case <-st.reached[k]:
		case <-ctx.Done():
			t.Fatalf("stream stopped after %d of %d publications, before break %d", st.sent.Load(), reconnectTotal, k+1)
		}
		fault(k)
		close(st.resumed[k])
	}
	wg.Wait()
	if n := st.sent.Load(); n != reconnectTotal && !t.Failed() {
		t.Fatalf("stream did not finish within %v: %d of %d published", streamTimeout, n, reconnectTotal)
	}
}

// publish sends publisher p's messages to both channels.
func (st *stream) publish(ctx context.Context, p int) error {
	for i := p; i < reconnectTotal; i += reconnectPublishers {
		// Message i waits until every break that begins at least half a
		// part before it is over.
		if i >= reconnectPart+reconnectPart/2 {
			select {
			case <-st.resumed[(i-reconnectPart/2)/reconnectPart-1]:
			case <-ctx.Done():
				return nil
			}
		}
		data := fmt.Appendf(nil, "%d/%d", p, i)
		var err error
		if st.hist != "" {
			err = st.send(ctx, st.hist, data, streamHistory())
		}
		if err == nil {
			err = st.send(ctx, st.plain, data, engine.PublishOptions{})
		}
		if ctx.Err() != nil {
			return nil // the test is over; it says why
		}
		if err != nil {
			return err
		}
		if n := st.sent.Add(1); n%reconnectPart == 0 && n/reconnectPart <= reconnectBreaks {
			close(st.reached[n/reconnectPart-1])
		}
	}
	return nil
}

func (st *stream) send(ctx context.Context, ch string, data []byte, opts engine.PublishOptions) error {
	c, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := st.a.Publish(c, ch, &engine.Publication{Data: data}, opts); err != nil {
		return fmt.Errorf("publish %s to %q: %w", data, ch, err)
	}
	return nil
}

// streamHistory keeps the whole stream for longer than the test runs.
func streamHistory() engine.PublishOptions {
	return engine.PublishOptions{HistorySize: 2 * reconnectTotal, HistoryTTL: 10 * time.Minute}
}

// checkHistoryStream publishes one last message to hist through a, waits
// until b delivers it and checks that b delivered every offset up to it
// exactly once, in order, in one epoch, carrying every message once.
func checkHistoryStream(t *testing.T, a, b *node, hist string) {
	t.Helper()
	end := a.publish(t, hist, []byte(reconnectEnd), streamHistory())
	if end.Offset != reconnectTotal+1 {
		t.Fatalf("history channel: the last publication got offset %d, want %d", end.Offset, reconnectTotal+1)
	}
	b.rec.await(t, streamTimeout, "the last publication on the history channel", func() bool {
		ds := b.rec.pubs[hist]
		return len(ds) > 0 && ds[len(ds)-1].pos.Offset >= end.Offset
	})
	got := (&Recorder{b.rec}).Publications(hist)
	for i, d := range got {
		if want := uint64(i + 1); d.Pub.Offset != want || d.Position.Offset != want || d.Position.Epoch != end.Epoch {
			t.Fatalf("history channel: delivery %d has offset %d at %+v, want offset %d in epoch %q",
				i, d.Pub.Offset, d.Position, want, end.Epoch)
		}
	}
	if len(got) != int(end.Offset) {
		t.Fatalf("history channel: %d deliveries, want %d", len(got), end.Offset)
	}
	if n := CheckAtMostOnce(t, got, reconnectPublishers, reconnectEnd); n != reconnectTotal {
		t.Fatalf("history channel: %d of %d messages delivered", n, reconnectTotal)
	}
}
