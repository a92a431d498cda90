package enginetest

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

func (s *suite) history(t *testing.T) {
	t.Run("EmptyStreamEpochStable", s.testEmptyStream)
	t.Run("RequestShapes", s.testRequestShapes)
	t.Run("SizeTrim", s.testSizeTrim)
	t.Run("TTLExpiry", s.testTTLExpiry)
	t.Run("RemoveHistoryKeepsPosition", s.testRemoveHistory)
	t.Run("RemoveHistoryUnknownChannel", s.testRemoveHistoryUnknown)
	t.Run("PublicationWithoutHistoryNotStored", s.testNotStored)
	t.Run("ChannelsIndependent", s.testChannelsIndependent)
}

// testEmptyStream checks that the position a subscriber reads before the
// first publication carries the epoch that publication gets.
func (s *suite) testEmptyStream(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	pubs, first := n.history(t, ch, engine.HistoryRequest{Limit: -1})
	if len(pubs) != 0 || first.Offset != 0 || first.Epoch == "" {
		t.Fatalf("new channel: %d publications at %+v, want none at offset 0 with an epoch", len(pubs), first)
	}
	_, again := n.history(t, ch, engine.HistoryRequest{})
	if again != first {
		t.Fatalf("second read of an empty stream at %+v, first at %+v", again, first)
	}
	sp := n.publish(t, ch, numbered(1), withHistory(10))
	if sp != (engine.StreamPosition{Offset: 1, Epoch: first.Epoch}) {
		t.Fatalf("first publication at %+v, want offset 1 in epoch %q", sp, first.Epoch)
	}
	for i := uint64(2); i <= 3; i++ {
		if sp := n.publish(t, ch, numbered(i), withHistory(10)); sp.Epoch != first.Epoch {
			t.Fatalf("publication %d in epoch %q, want %q", i, sp.Epoch, first.Epoch)
		}
		if _, pos := n.history(t, ch, engine.HistoryRequest{}); pos != (engine.StreamPosition{Offset: i, Epoch: first.Epoch}) {
			t.Fatalf("after publication %d the position is %+v", i, pos)
		}
	}
}

// historyCase is one HistoryRequest and the offsets it must return.
type historyCase struct {
	name string
	req  engine.HistoryRequest
	want []uint64
}

// checkCases runs cases against ch, whose stream is at top, and checks
// every returned publication's payload is numbered(offset).
func checkCases(t *testing.T, n *node, ch string, top engine.StreamPosition, cases []historyCase) {
	t.Helper()
	for _, c := range cases {
		pubs, pos := n.history(t, ch, c.req)
		if got := offsets(pubs); !slices.Equal(got, c.want) && (len(got) != 0 || len(c.want) != 0) {
			t.Errorf("%s: offsets %v, want %v", c.name, got, c.want)
		}
		if pos != top {
			t.Errorf("%s: position %+v, want %+v", c.name, pos, top)
		}
		for _, p := range pubs {
			if !bytes.Equal(p.Data, numbered(p.Offset)) {
				t.Errorf("%s: offset %d carries %q", c.name, p.Offset, p.Data)
			}
		}
	}
}

func since(offset uint64, epoch string) *engine.StreamPosition {
	return &engine.StreamPosition{Offset: offset, Epoch: epoch}
}

// testRequestShapes covers protocol.md section 3: Since is exclusive,
// forward reads go up from the oldest, reverse reads down from the newest,
// Limit 0 is the position only, -1 everything, N at most N.
func (s *suite) testRequestShapes(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	var top engine.StreamPosition
	for i := uint64(1); i <= 10; i++ {
		top = n.publish(t, ch, numbered(i), withHistory(100))
	}
	e := top.Epoch
	checkCases(t, n, ch, top, []historyCase{
		{"all", engine.HistoryRequest{Limit: -1}, seq(1, 10)},
		{"first 3", engine.HistoryRequest{Limit: 3}, seq(1, 3)},
		{"limit above size", engine.HistoryRequest{Limit: 50}, seq(1, 10)},
		{"position only", engine.HistoryRequest{Limit: 0}, nil},
		{"position only with since", engine.HistoryRequest{Since: since(4, e)}, nil},
		{"reverse all", engine.HistoryRequest{Limit: -1, Reverse: true}, seq(10, 1)},
		{"reverse newest 3", engine.HistoryRequest{Limit: 3, Reverse: true}, seq(10, 8)},
		{"since 4", engine.HistoryRequest{Since: since(4, e), Limit: -1}, seq(5, 10)},
		{"since 4 limit 2", engine.HistoryRequest{Since: since(4, e), Limit: 2}, seq(5, 6)},
		{"since 0", engine.HistoryRequest{Since: since(0, e), Limit: -1}, seq(1, 10)},
		{"since 9", engine.HistoryRequest{Since: since(9, e), Limit: -1}, seq(10, 10)},
		{"since top", engine.HistoryRequest{Since: since(10, e), Limit: -1}, nil},
		{"since beyond top", engine.HistoryRequest{Since: since(15, e), Limit: -1}, nil},
		{"since with another epoch", engine.HistoryRequest{Since: since(8, "other"), Limit: -1}, seq(9, 10)},
		{"reverse since 4", engine.HistoryRequest{Since: since(4, e), Limit: -1, Reverse: true}, seq(3, 1)},
		{"reverse since 4 limit 2", engine.HistoryRequest{Since: since(4, e), Limit: 2, Reverse: true}, seq(3, 2)},
		{"reverse since 1", engine.HistoryRequest{Since: since(1, e), Limit: -1, Reverse: true}, nil},
		{"reverse since top", engine.HistoryRequest{Since: since(10, e), Limit: -1, Reverse: true}, seq(9, 1)},
		{"reverse since above top", engine.HistoryRequest{Since: since(11, e), Limit: 3, Reverse: true}, seq(10, 8)},
		{"reverse since far beyond top", engine.HistoryRequest{Since: since(1000, e), Limit: -1, Reverse: true}, seq(10, 1)},
	})
}

// testSizeTrim checks that a stream keeps the newest HistorySize
// publications and that reads start from the oldest kept one.
func (s *suite) testSizeTrim(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	var top engine.StreamPosition
	for i := uint64(1); i <= 12; i++ {
		top = n.publish(t, ch, numbered(i), withHistory(5))
	}
	if top.Offset != 12 {
		t.Fatalf("top offset %d after 12 publications", top.Offset)
	}
	e := top.Epoch
	checkCases(t, n, ch, top, []historyCase{
		{"all", engine.HistoryRequest{Limit: -1}, seq(8, 12)},
		{"oldest 2", engine.HistoryRequest{Limit: 2}, seq(8, 9)},
		{"reverse all", engine.HistoryRequest{Limit: -1, Reverse: true}, seq(12, 8)},
		{"since before the oldest kept", engine.HistoryRequest{Since: since(2, e), Limit: -1}, seq(8, 12)},
		{"since 9", engine.HistoryRequest{Since: since(9, e), Limit: -1}, seq(10, 12)},
		{"reverse since 10", engine.HistoryRequest{Since: since(10, e), Limit: -1, Reverse: true}, seq(9, 8)},
		{"reverse since the oldest kept", engine.HistoryRequest{Since: since(8, e), Limit: -1, Reverse: true}, nil},
		{"reverse since trimmed", engine.HistoryRequest{Since: since(5, e), Limit: -1, Reverse: true}, nil},
	})
}

// testTTLExpiry checks that publications go away after HistoryTTL while
// the position stays, and that the stream then continues.
func (s *suite) testTTLExpiry(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	opts := engine.PublishOptions{HistorySize: 10, HistoryTTL: time.Second}
	var top engine.StreamPosition
	for i := uint64(1); i <= 3; i++ {
		top = n.publish(t, ch, numbered(i), opts)
	}
	if pubs, _ := n.history(t, ch, engine.HistoryRequest{Limit: -1}); len(pubs) != 3 {
		t.Fatalf("history right after publishing has %d publications, want 3", len(pubs))
	}
	Eventually(t, 15*time.Second, func() string {
		pubs, pos := n.history(t, ch, engine.HistoryRequest{Limit: -1})
		if pos != top {
			t.Fatalf("position %+v while publications expire, want %+v", pos, top)
		}
		if len(pubs) != 0 {
			return fmt.Sprintf("%d publications not expired", len(pubs))
		}
		return ""
	})
	sp := n.publish(t, ch, numbered(4), opts)
	if sp != (engine.StreamPosition{Offset: 4, Epoch: top.Epoch}) {
		t.Fatalf("publication after expiry at %+v, want offset 4 in epoch %q", sp, top.Epoch)
	}
	if pubs, _ := n.history(t, ch, engine.HistoryRequest{Limit: -1}); !slices.Equal(offsets(pubs), []uint64{4}) {
		t.Fatalf("history after expiry and a new publication: offsets %v, want [4]", offsets(pubs))
	}
}

func (s *suite) testRemoveHistory(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	var top engine.StreamPosition
	for i := uint64(1); i <= 3; i++ {
		top = n.publish(t, ch, numbered(i), withHistory(10))
	}
	if err := n.RemoveHistory(ctx(t), ch); err != nil {
		t.Fatalf("RemoveHistory: %v", err)
	}
	pubs, pos := n.history(t, ch, engine.HistoryRequest{Limit: -1})
	if len(pubs) != 0 || pos != top {
		t.Fatalf("after RemoveHistory: %d publications at %+v, want none at %+v", len(pubs), pos, top)
	}
	sp := n.publish(t, ch, numbered(4), withHistory(10))
	if sp != (engine.StreamPosition{Offset: 4, Epoch: top.Epoch}) {
		t.Fatalf("publication after RemoveHistory at %+v, want offset 4 in epoch %q", sp, top.Epoch)
	}
	checkCases(t, n, ch, sp, []historyCase{{"all", engine.HistoryRequest{Limit: -1}, []uint64{4}}})
}

func (s *suite) testRemoveHistoryUnknown(t *testing.T) {
	n := s.start(t)
	if err := n.RemoveHistory(ctx(t), channel(t, "a")); err != nil {
		t.Fatalf("RemoveHistory of a channel never published to: %v", err)
	}
}

// testNotStored checks that a publication without history options does not
// enter the channel's stream even when the channel has one.
func (s *suite) testNotStored(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	n.subscribe(t, ch)
	n.publish(t, ch, numbered(1), withHistory(10))
	top := n.publish(t, ch, numbered(2), withHistory(10))
	if sp := n.publish(t, ch, []byte(`"transient"`), engine.PublishOptions{}); sp != (engine.StreamPosition{}) {
		t.Errorf("Publish without history returned %+v", sp)
	}
	got := n.rec.awaitPubs(t, ch, 3)
	if d := got[2]; d.pub.Offset != 0 || d.pos != (engine.StreamPosition{}) {
		t.Errorf("publication without history delivered with offset %d at %+v", d.pub.Offset, d.pos)
	}
	checkCases(t, n, ch, top, []historyCase{{"all", engine.HistoryRequest{Limit: -1}, seq(1, 2)}})
}

func (s *suite) testChannelsIndependent(t *testing.T) {
	n := s.start(t)
	a, b := channel(t, "a"), channel(t, "b")
	for i := uint64(1); i <= 3; i++ {
		n.publish(t, a, numbered(i), withHistory(10))
	}
	spB := n.publish(t, b, numbered(1), withHistory(10))
	if spB.Offset != 1 {
		t.Fatalf("first publication on a second channel got offset %d", spB.Offset)
	}
	if err := n.RemoveHistory(ctx(t), b); err != nil {
		t.Fatalf("RemoveHistory: %v", err)
	}
	if pubs, _ := n.history(t, a, engine.HistoryRequest{Limit: -1}); len(pubs) != 3 {
		t.Fatalf("RemoveHistory of one channel left %d publications in another, want 3", len(pubs))
	}
}
