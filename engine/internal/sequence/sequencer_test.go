package sequence

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
)

// waitTimeout bounds every wait for an expected event; passing tests
// never reach it.
const waitTimeout = 10 * time.Second

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixture is a Sequencer of resolved messages over a fakeHistory.
type fixture struct {
	seq     *Sequencer[Message]
	hist    *fakeHistory
	h       *enginetest.Recorder
	metrics *counters

	mu      sync.Mutex
	backoff []int // the retry numbers Backoff was asked for
}

// newFixture makes a Sequencer; edit may change its Config. The caller
// queues what it wants delivered first, then calls run.
func newFixture(t *testing.T, edit func(*Config[Message])) *fixture {
	f := &fixture{hist: newFakeHistory(), h: enginetest.NewRecorder(), metrics: &counters{}}
	cfg := Config[Message]{
		Resolve: func(channel string, m Message) (Message, bool) {
			if channel != m.Channel {
				t.Errorf("message of %q queued as %q", m.Channel, channel)
			}
			return m, m.Kind != Kind(255)
		},
		History:     f.hist,
		Metrics:     f.metrics,
		ReadTimeout: time.Second,
		Backoff: func(n int) time.Duration {
			f.mu.Lock()
			f.backoff = append(f.backoff, n)
			f.mu.Unlock()
			return time.Millisecond
		},
	}
	if edit != nil {
		edit(&cfg)
	}
	f.seq = New(cfg)
	return f
}

// run starts delivery; it is stopped, and waited for, when t ends.
func (f *fixture) run(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.seq.Run(f.h)
	}()
	t.Cleanup(func() {
		f.seq.Stop()
		<-done
	})
}

func live(ch, epoch string, o uint64) Message {
	return Message{Kind: Publication, Channel: ch, Epoch: epoch, Pub: pub(ch, o)}
}

func (f *fixture) live(ch, epoch string, offsets ...uint64) {
	for _, o := range offsets {
		f.seq.Deliver(ch, live(ch, epoch, o))
	}
}

func (f *fixture) subscribe(ch string, base engine.StreamPosition) {
	f.seq.Subscribe(ch, base, f.seq.Resyncs())
}

// offsets waits for n publications on ch and returns their offsets.
func (f *fixture) offsets(t *testing.T, ch string, n int) []uint64 {
	t.Helper()
	var out []uint64
	for _, d := range f.h.WaitForPublications(t, ch, n, waitTimeout) {
		out = append(out, d.Pub.Offset)
	}
	return out
}

func checkOffsets(t *testing.T, ch string, got, want []uint64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: delivered offsets %v, want %v", ch, got, want)
	}
}

func (f *fixture) checkMetrics(t *testing.T, gaps, replayed, lost uint64) {
	t.Helper()
	g, r, l := f.metrics.get()
	if g != gaps || r != replayed || l != lost {
		t.Errorf("metrics: %d gaps, %d replayed, %d lost; want %d, %d, %d", g, r, l, gaps, replayed, lost)
	}
}

func TestLiveInOrder(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("a", engine.StreamPosition{})
	f.live("a", "e1", 1, 2, 3)
	f.run(t)
	checkOffsets(t, "a", f.offsets(t, "a", 3), []uint64{1, 2, 3})
	for _, d := range f.h.Publications("a") {
		if d.Position != (engine.StreamPosition{Offset: d.Pub.Offset, Epoch: "e1"}) {
			t.Errorf("offset %d delivered at %+v", d.Pub.Offset, d.Position)
		}
	}
	f.checkMetrics(t, 0, 0, 0)
}

func TestGapRepairedFromHistory(t *testing.T) {
	f := newFixture(t, nil)
	f.hist.store("a", "e1", 5)
	f.subscribe("a", engine.StreamPosition{Epoch: "e1"})
	f.live("a", "e1", 1, 5, 6)
	f.run(t)
	checkOffsets(t, "a", f.offsets(t, "a", 6), []uint64{1, 2, 3, 4, 5, 6})
	if d := f.h.Publications("a")[2]; string(d.Pub.Data) != "a/3" || d.Position.Epoch != "e1" {
		t.Errorf("repaired delivery %q at %+v, want history's a/3 in e1", d.Pub.Data, d.Position)
	}
	f.checkMetrics(t, 1, 3, 0)
}

// TestGapInBatches checks a repair read cut at a batch size.
func TestGapInBatches(t *testing.T) {
	f := newFixture(t, nil)
	f.hist.batch = 2
	f.hist.store("a", "e1", 8)
	f.subscribe("a", engine.StreamPosition{Epoch: "e1"})
	f.live("a", "e1", 8)
	f.run(t)
	checkOffsets(t, "a", f.offsets(t, "a", 8), []uint64{1, 2, 3, 4, 5, 6, 7, 8})
	f.checkMetrics(t, 1, 7, 0)
}

// TestGapTrimmed checks that what history no longer holds is skipped and
// counted as lost, and delivery goes on with what it holds.
func TestGapTrimmed(t *testing.T) {
	f := newFixture(t, nil)
	f.hist.store("a", "e1", 9, 4, 6, 9)
	f.subscribe("a", engine.StreamPosition{Epoch: "e1"})
	f.live("a", "e1", 1, 9)
	f.run(t)
	checkOffsets(t, "a", f.offsets(t, "a", 4), []uint64{1, 4, 6, 9})
	f.checkMetrics(t, 1, 2, 5) // 2, 3, 5, 7, 8
}

// TestEpochChange checks that a live publication of a new stream restarts
// the channel's offsets and refills the new stream from its start.
func TestEpochChange(t *testing.T) {
	f := newFixture(t, nil)
	f.hist.store("a", "e2", 3)
	f.subscribe("a", engine.StreamPosition{Offset: 10, Epoch: "e1"})
	f.live("a", "e1", 11)
	f.live("a", "e2", 3, 4)
	f.run(t)
	checkOffsets(t, "a", f.offsets(t, "a", 5), []uint64{11, 1, 2, 3, 4})
	for i, d := range f.h.Publications("a") {
		if want := map[bool]string{true: "e1", false: "e2"}[i == 0]; d.Position.Epoch != want {
			t.Errorf("delivery %d at %+v, want epoch %s", i, d.Position, want)
		}
	}
	f.checkMetrics(t, 1, 2, 0)
}

// TestReplayDropsDuplicates checks that live publications a resync has
// already delivered are not delivered again.
func TestReplayDropsDuplicates(t *testing.T) {
	f := newFixture(t, nil)
	f.hist.store("a", "e1", 5)
	f.subscribe("a", engine.StreamPosition{Offset: 1, Epoch: "e1"})
	f.seq.Resync("a")
	f.live("a", "e1", 4, 5, 6)
	f.run(t)
	checkOffsets(t, "a", f.offsets(t, "a", 5), []uint64{2, 3, 4, 5, 6})
	f.checkMetrics(t, 0, 4, 0)
}

// TestChunkedReplay checks that a resync of many channels reads them in
// chunks of ReplayChunk, reads again channels whose read was cut at the
// batch size, and delivers each channel's missed publications in order.
func TestChunkedReplay(t *testing.T) {
	f := newFixture(t, func(c *Config[Message]) { c.ReplayChunk = 2 })
	f.hist.batch = 3
	names := []string{"a", "b", "c", "d", "e"}
	for i, ch := range names {
		f.hist.store(ch, "e1", uint64(i+2))
		f.subscribe(ch, engine.StreamPosition{Offset: 1, Epoch: "e1"})
	}
	f.subscribe("empty", engine.StreamPosition{})
	f.seq.ResyncAll()
	f.seq.ResyncAll() // coalesced with the first
	f.run(t)
	for i, ch := range names {
		var want []uint64
		for o := uint64(2); o <= uint64(i+2); o++ {
			want = append(want, o)
		}
		checkOffsets(t, ch, f.offsets(t, ch, len(want)), want)
	}
	calls := f.hist.tailCalls()
	chunks, singles := 0, 0
	for _, c := range calls {
		switch {
		case len(c) == 1 && c[0].After > 1:
			singles++ // catching up after a cut read
		case len(c) > 2:
			t.Errorf("a Tails call of %d cursors, ReplayChunk is 2", len(c))
		default:
			chunks++
		}
	}
	// 6 channels in chunks of 2; "d" (5 to read) and "e" (6) were cut at 3.
	if chunks != 3 || singles != 2 {
		t.Errorf("Tails calls %v: %d chunks and %d catch-ups, want 3 and 2", calls, chunks, singles)
	}
	f.checkMetrics(t, 0, 1+2+3+4+5, 0)
}

// TestReplayNewEpoch checks a replay that finds the stream restarted: the
// channel starts again from the new stream's first publication.
func TestReplayNewEpoch(t *testing.T) {
	f := newFixture(t, nil)
	f.hist.store("a", "e2", 2)
	f.subscribe("a", engine.StreamPosition{Offset: 7, Epoch: "e1"})
	f.seq.Resync("a")
	f.live("a", "e2", 2, 3)
	f.run(t)
	checkOffsets(t, "a", f.offsets(t, "a", 3), []uint64{1, 2, 3})
	f.checkMetrics(t, 0, 2, 0)
}

// TestSubscribeAfterResync checks that a subscription whose base was read
// before a resync was queued is replayed: the resync could not include it.
func TestSubscribeAfterResync(t *testing.T) {
	f := newFixture(t, nil)
	f.hist.store("a", "e1", 3)
	resyncs := f.seq.Resyncs()
	f.seq.ResyncAll()
	f.seq.Subscribe("a", engine.StreamPosition{Offset: 1, Epoch: "e1"}, resyncs)
	f.run(t)
	checkOffsets(t, "a", f.offsets(t, "a", 2), []uint64{2, 3})
}

// TestRetryOnHistoryFailure checks that a failed read is retried with
// backoff and delivery resumes in order once history answers.
func TestRetryOnHistoryFailure(t *testing.T) {
	f := newFixture(t, nil)
	f.hist.store("a", "e1", 4)
	f.hist.setFail(3)
	f.subscribe("a", engine.StreamPosition{Epoch: "e1"})
	f.subscribe("b", engine.StreamPosition{})
	f.live("a", "e1", 4)
	f.live("b", "", 1) // waits behind a's repair: one queue, one order
	f.run(t)
	checkOffsets(t, "a", f.offsets(t, "a", 4), []uint64{1, 2, 3, 4})
	checkOffsets(t, "b", f.offsets(t, "b", 1), []uint64{1})
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Equal(f.backoff, []int{1, 2, 3}) {
		t.Errorf("backoff asked for retries %v, want 1, 2, 3", f.backoff)
	}
}

// TestOrderPerChannel interleaves many channels' live publications, with
// gaps, queued from several goroutines (one per channel, as a connection's
// reader serves each channel in order) and checks that every channel gets
// all its offsets once, ascending.
func TestOrderPerChannel(t *testing.T) {
	const channels, each = 8, 60
	f := newFixture(t, func(c *Config[Message]) { c.ReplayChunk = 3 })
	f.hist.batch = 4
	for i := range channels {
		ch := fmt.Sprint("c", i)
		f.hist.store(ch, "e1", each)
		f.subscribe(ch, engine.StreamPosition{Epoch: "e1"})
	}
	f.run(t)
	var wg sync.WaitGroup
	for i := range channels {
		ch := fmt.Sprint("c", i)
		wg.Go(func() {
			for o := uint64(1); o <= each; o++ {
				if o%20 == 0 {
					f.seq.Resync(ch)
				}
				if o%(uint64(i)+2) == 0 {
					continue // never arrives live: a gap
				}
				f.live(ch, "e1", o)
			}
			f.seq.Resync(ch) // in case the last ones never arrived
		})
	}
	wg.Wait()
	want := make([]uint64, each)
	for i := range want {
		want[i] = uint64(i + 1)
	}
	for i := range channels {
		ch := fmt.Sprint("c", i)
		checkOffsets(t, ch, f.offsets(t, ch, each), want)
	}
	if _, _, lost := f.metrics.get(); lost != 0 {
		t.Errorf("%d lost, want none", lost)
	}
}

// TestUnsubscribedAndControl checks what is delivered without a stream:
// control messages always, join/leave and publications without offsets
// while subscribed, nothing of channels not subscribed, and nothing
// Resolve drops.
func TestUnsubscribedAndControl(t *testing.T) {
	f := newFixture(t, nil)
	f.seq.Deliver("", Message{Kind: Control, Data: []byte("c1")})
	f.live("a", "", 0) // not subscribed yet: dropped
	f.subscribe("a", engine.StreamPosition{})
	f.seq.Deliver("a", Message{Kind: Join, Channel: "a", Info: &engine.ClientInfo{}})
	f.seq.Deliver("a", Message{Kind: Kind(255), Channel: "a"}) // Resolve drops it
	f.live("a", "", 0)
	f.seq.Unsubscribe("a")
	f.live("a", "", 0)
	f.seq.Deliver("", Message{Kind: Control, Data: []byte("c2")})
	f.run(t)
	controls := f.h.WaitForControls(t, 2, waitTimeout)
	if n := len(f.h.Publications("a")); n != 1 {
		t.Errorf("%d publications on a, want the one made while subscribed", n)
	}
	if n := len(f.h.Joins("a")); n != 1 || len(controls) != 2 || string(controls[0]) != "c1" || string(controls[1]) != "c2" {
		t.Errorf("%d joins, controls %q; want 1 join, c1 and c2", n, controls)
	}
	if f.seq.Depth() != 0 {
		t.Errorf("depth %d after delivery", f.seq.Depth())
	}
}

// TestStopDuringOutage checks that Stop ends Run while it retries a read
// against a history that never answers; TestMain's goleak checks that
// nothing is left behind.
func TestStopDuringOutage(t *testing.T) {
	f := newFixture(t, func(c *Config[Message]) {
		c.Backoff = func(int) time.Duration { return time.Hour }
	})
	f.hist.setFail(-1)
	f.hist.store("a", "e1", 3)
	f.subscribe("a", engine.StreamPosition{Epoch: "e1"})
	f.live("a", "e1", 3, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.seq.Run(f.h)
	}()
	select {
	case <-f.hist.failed:
	case <-time.After(waitTimeout):
		t.Fatal("history was never read")
	}
	f.seq.Stop()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("Run still running after Stop")
	}
	f.seq.Stop() // harmless again
	if n := len(f.h.Publications("a")); n != 0 {
		t.Errorf("%d publications delivered past an unrepaired gap", n)
	}
}

// TestStopBeforeRun checks that a Sequencer stopped before it ran returns
// from Run at once.
func TestStopBeforeRun(t *testing.T) {
	f := newFixture(t, nil)
	f.live("a", "e1", 1)
	f.seq.Stop()
	f.seq.Run(f.h)
}

func TestNewPanicsWithoutHistory(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New accepted a Config without History")
		}
	}()
	New(Config[Message]{Resolve: func(string, Message) (Message, bool) { return Message{}, false }})
}

// TestExpectReplaysMissed: a message that arrives between Expect and
// Subscribe (a publication committed after the base was read, whose
// notification came before the subscription was queued) is dropped, and
// Subscribe replays it from history; without Expect it would wait for the
// channel's next publication.
func TestExpectReplaysMissed(t *testing.T) {
	f := newFixture(t, nil)
	f.hist.store("a", "e1", 3)
	resyncs := f.seq.Resyncs()
	f.seq.Expect("a")
	f.live("a", "e1", 3)
	f.seq.Subscribe("a", engine.StreamPosition{Offset: 2, Epoch: "e1"}, resyncs)
	f.run(t)
	checkOffsets(t, "a", f.offsets(t, "a", 1), []uint64{3})
}

// TestExpectWithoutMissReadsNothing: an Expect that dropped nothing, or
// one that was forgotten, makes Subscribe read no history.
func TestExpectWithoutMissReadsNothing(t *testing.T) {
	f := newFixture(t, nil)
	f.hist.store("a", "e1", 4)
	f.hist.store("b", "e1", 4)
	f.seq.Expect("a")
	f.subscribe("a", engine.StreamPosition{Offset: 2, Epoch: "e1"})
	f.seq.Expect("b")
	f.seq.Forget("b")
	f.live("b", "e1", 3) // not expected any more: dropped and forgotten
	f.subscribe("b", engine.StreamPosition{Offset: 3, Epoch: "e1"})
	f.live("a", "e1", 3)
	f.live("b", "e1", 4)
	f.run(t)
	checkOffsets(t, "a", f.offsets(t, "a", 1), []uint64{3})
	checkOffsets(t, "b", f.offsets(t, "b", 1), []uint64{4})
	f.hist.mu.Lock()
	defer f.hist.mu.Unlock()
	if len(f.hist.tails) != 0 || f.hist.betweens != 0 {
		t.Errorf("history read %d times (tails) and %d (between), want none", len(f.hist.tails), f.hist.betweens)
	}
}

// TestExpectTwice: two subscriptions of one channel expected at once both
// replay what was missed; the second Subscribe ends the Expect.
func TestExpectTwice(t *testing.T) {
	f := newFixture(t, nil)
	f.hist.store("a", "e1", 3)
	f.seq.Expect("a")
	f.seq.Expect("a")
	f.live("a", "e1", 3)
	f.subscribe("a", engine.StreamPosition{Offset: 2, Epoch: "e1"})
	f.subscribe("a", engine.StreamPosition{Offset: 2, Epoch: "e1"})
	f.run(t)
	checkOffsets(t, "a", f.offsets(t, "a", 1), []uint64{3})
	f.seq.mu.Lock()
	defer f.seq.mu.Unlock()
	if len(f.seq.expect) != 0 || len(f.seq.missed) != 0 {
		t.Errorf("after both subscribes: expect %v, missed %v; want both empty", f.seq.expect, f.seq.missed)
	}
}
