package enginetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// subscribePosition checks engine.PositionSubscriber: the position it
// returns is the one History with Limit 0 returns, and nothing published
// above it is lost to the subscriber.
func (s *suite) subscribePosition(t *testing.T) {
	t.Run("EmptyStream", s.testSubscribePositionEmpty)
	t.Run("Top", s.testSubscribePositionTop)
	t.Run("NothingAboveLost", s.testSubscribePositionNothingLost)
}

// subscribePosition calls n's SubscribePosition; the test is skipped for
// engines without it.
func (n *node) subscribePosition(t *testing.T, ch string) engine.StreamPosition {
	t.Helper()
	ps, ok := engine.PositionSubscriberOf(n.Engine)
	if !ok {
		t.Skip("engine is not an engine.PositionSubscriber")
	}
	sp, err := ps.SubscribePosition(ctx(t), ch, time.Minute)
	if err != nil {
		t.Fatalf("SubscribePosition(%q): %v", ch, err)
	}
	return sp
}

// testSubscribePositionEmpty: on a channel without a stream the position
// is created, as History creates it, and the first publication continues it.
func (s *suite) testSubscribePositionEmpty(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	sp := n.subscribePosition(t, ch)
	if sp.Offset != 0 || sp.Epoch == "" {
		t.Fatalf("new channel at %+v, want offset 0 with an epoch", sp)
	}
	if _, pos := n.history(t, ch, engine.HistoryRequest{}); pos != sp {
		t.Fatalf("History after SubscribePosition at %+v, SubscribePosition returned %+v", pos, sp)
	}
	want := engine.StreamPosition{Offset: 1, Epoch: sp.Epoch}
	if got := n.publish(t, ch, numbered(1), withHistory(10)); got != want {
		t.Fatalf("first publication at %+v, want %+v", got, want)
	}
	if d := n.rec.awaitPubs(t, ch, 1)[0]; d.pos != want {
		t.Fatalf("first publication delivered at %+v, want %+v", d.pos, want)
	}
}

// testSubscribePositionTop: on a channel with publications it is the
// stream's top, on another node of a cluster too.
func (s *suite) testSubscribePositionTop(t *testing.T) {
	a := s.start(t)
	b := a
	if s.caps.Cluster {
		b = s.start(t)
	}
	ch := channel(t, "a")
	var top engine.StreamPosition
	for i := uint64(1); i <= 3; i++ {
		top = a.publish(t, ch, numbered(i), withHistory(10))
	}
	if sp := b.subscribePosition(t, ch); sp != top {
		t.Fatalf("SubscribePosition at %+v, the stream's top is %+v", sp, top)
	}
	next := a.publish(t, ch, numbered(4), withHistory(10))
	b.rec.await(t, eventTimeout, "publication 4 on "+ch, func() bool {
		for _, d := range b.rec.pubs[ch] {
			if d.pos == next {
				return true
			}
		}
		return false
	})
}

// testSubscribePositionNothingLost publishes while another node subscribes
// with its position: every publication above the position returned
// reaches the subscriber, in order, whatever its timing.
func (s *suite) testSubscribePositionNothingLost(t *testing.T) {
	a := s.start(t)
	b := a
	if s.caps.Cluster {
		b = s.start(t)
	}
	ch := channel(t, "a")
	a.publish(t, ch, numbered(1), withHistory(1000))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var last engine.StreamPosition
	var pubErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(2); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			c, cancel := context.WithTimeout(t.Context(), callTimeout)
			sp, err := a.Publish(c, ch, &engine.Publication{Data: numbered(i)}, withHistory(1000))
			cancel()
			if err != nil {
				pubErr = err
				return
			}
			last = sp
			if i >= 200 {
				return
			}
		}
	}()
	sp := b.subscribePosition(t, ch)
	close(stop)
	wg.Wait()
	if pubErr != nil {
		t.Fatalf("Publish: %v", pubErr)
	}
	if last.Offset <= sp.Offset {
		last = a.publish(t, ch, numbered(last.Offset+1), withHistory(1000)) // one above the position at least
	}
	b.rec.await(t, eventTimeout, fmt.Sprintf("publications up to offset %d", last.Offset), func() bool {
		got := b.rec.pubs[ch]
		return len(got) > 0 && got[len(got)-1].pos.Offset >= last.Offset
	})
	want := sp.Offset + 1
	for _, d := range b.rec.pubsOf(ch) {
		if d.pos.Offset <= sp.Offset {
			continue // delivered before the subscription: allowed, not required
		}
		if d.pos.Offset != want || d.pos.Epoch != sp.Epoch {
			t.Fatalf("after position %+v: delivered %+v, want offset %d", sp, d.pos, want)
		}
		want++
	}
	if want != last.Offset+1 {
		t.Fatalf("delivered up to offset %d, published up to %d", want-1, last.Offset)
	}
}
