package memory

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestConformance(t *testing.T) {
	enginetest.Run(t, func(*testing.T) engine.Engine {
		return New(Config{JanitorInterval: 50 * time.Millisecond})
	}, enginetest.Capabilities{History: true, Presence: true, Idempotency: true, Maps: true, Store: true, ChannelStates: true})
}

// fakeClock is a clock tests move by hand.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// countingHandler counts deliveries and keeps the last publication.
type countingHandler struct {
	mu   sync.Mutex
	pubs []*engine.Publication
}

func (h *countingHandler) HandlePublication(_ string, p *engine.Publication, _ engine.StreamPosition) {
	h.mu.Lock()
	h.pubs = append(h.pubs, p)
	h.mu.Unlock()
}
func (h *countingHandler) HandleJoin(string, *engine.ClientInfo)  {}
func (h *countingHandler) HandleLeave(string, *engine.ClientInfo) {}
func (h *countingHandler) HandleControl([]byte)                   {}

// started returns a started engine with a fake clock and a janitor that
// never ticks on its own, so tests drive it with sweep.
func started(t testing.TB, opts Config) (*Engine, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	opts.Now = clock.Now
	if opts.JanitorInterval == 0 {
		opts.JanitorInterval = time.Hour
	}
	e := New(opts)
	if err := e.Start(context.Background(), &countingHandler{}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e, clock
}

func publish(t *testing.T, e *Engine, ch string, opts engine.PublishOptions) engine.StreamPosition {
	t.Helper()
	sp, err := e.Publish(context.Background(), ch, &engine.Publication{Data: []byte(`1`)}, opts)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	return sp
}

func read(t *testing.T, e *Engine, ch string) ([]*engine.Publication, engine.StreamPosition) {
	t.Helper()
	pubs, sp, err := e.History(context.Background(), ch, engine.HistoryRequest{Limit: -1})
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	return pubs, sp
}

// countStreams counts streams kept in memory, expired or not.
func countStreams(e *Engine) int {
	n := 0
	for i := range e.shards {
		h := &e.shards[i].history
		h.mu.Lock()
		n += len(h.streams)
		h.mu.Unlock()
	}
	return n
}

func countPresenceChannels(e *Engine) int {
	n := 0
	for i := range e.shards {
		p := &e.shards[i].presence
		p.mu.Lock()
		n += len(p.channels)
		p.mu.Unlock()
	}
	return n
}

// TestWholeStreamExpiresAfterLastPublication pins the Centrifugo behaviour:
// a publication older than HistoryTTL stays while newer ones keep the
// stream alive, and all go together HistoryTTL after the last.
func TestWholeStreamExpiresAfterLastPublication(t *testing.T) {
	e, clock := started(t, Config{})
	opts := engine.PublishOptions{HistorySize: 10, HistoryTTL: 10 * time.Second}
	publish(t, e, "ch", opts)
	clock.Advance(6 * time.Second)
	top := publish(t, e, "ch", opts)
	clock.Advance(6 * time.Second) // the first publication is 12s old
	if pubs, _ := read(t, e, "ch"); len(pubs) != 2 {
		t.Fatalf("%d publications 6s after the last, want 2", len(pubs))
	}
	clock.Advance(4 * time.Second) // 10s after the last
	pubs, pos := read(t, e, "ch")
	if len(pubs) != 0 || pos != top {
		t.Fatalf("%d publications at %+v 10s after the last, want none at %+v", len(pubs), pos, top)
	}
}

func TestEpochChangesWhenMetaExpires(t *testing.T) {
	e, clock := started(t, Config{HistoryMetaTTL: time.Minute})
	opts := engine.PublishOptions{HistorySize: 10, HistoryTTL: 10 * time.Second}
	first := publish(t, e, "ch", opts)
	publish(t, e, "ch", opts)

	clock.Advance(50 * time.Second)
	if _, pos := read(t, e, "ch"); pos.Epoch != first.Epoch || pos.Offset != 2 {
		t.Fatalf("meta lost before its TTL: %+v", pos)
	}
	// The read above kept the meta for another minute.
	clock.Advance(50 * time.Second)
	if _, pos := read(t, e, "ch"); pos.Epoch != first.Epoch || pos.Offset != 2 {
		t.Fatalf("a read did not extend the meta: %+v", pos)
	}

	clock.Advance(61 * time.Second)
	_, pos := read(t, e, "ch")
	if pos.Epoch == first.Epoch || pos.Epoch == "" || pos.Offset != 0 {
		t.Fatalf("after meta expiry the position is %+v, want offset 0 in a new epoch (old %q)", pos, first.Epoch)
	}
	if sp := publish(t, e, "ch", opts); sp != (engine.StreamPosition{Offset: 1, Epoch: pos.Epoch}) {
		t.Fatalf("first publication of the new stream at %+v, want offset 1 in %q", sp, pos.Epoch)
	}
}

func TestPublishMetaTTLOverridesDefault(t *testing.T) {
	e, clock := started(t, Config{HistoryMetaTTL: time.Hour})
	first := publish(t, e, "ch", engine.PublishOptions{HistorySize: 1, HistoryTTL: time.Second, HistoryMetaTTL: time.Minute})
	clock.Advance(2 * time.Minute)
	e.sweep()
	if n := countStreams(e); n != 0 {
		t.Fatalf("%d streams after their meta TTL, want 0", n)
	}
	if _, pos := read(t, e, "ch"); pos.Epoch == first.Epoch {
		t.Fatalf("epoch %q survived its meta TTL", pos.Epoch)
	}
}

func TestJanitorClearsDataKeepsMeta(t *testing.T) {
	e, clock := started(t, Config{})
	publish(t, e, "ch", engine.PublishOptions{HistorySize: 10, HistoryTTL: time.Second})
	clock.Advance(2 * time.Second)
	if n := e.sweep(); n != 1 {
		t.Fatalf("sweep handled %d deadlines, want 1", n)
	}
	s := e.shard("ch").history.streams["ch"]
	if s == nil || s.pubs.n != 0 || s.pubs.buf != nil || s.top != 1 {
		t.Fatalf("after data expiry the stream is %+v, want kept meta with no publications", s)
	}
}

// TestJanitorBounded checks that one tick handles at most JanitorBatch
// expired streams and presence entries per shard, and that later ticks
// finish the work.
func TestJanitorBounded(t *testing.T) {
	const batch, streams = 10, 35
	e, clock := started(t, Config{Shards: 1, JanitorBatch: batch, HistoryMetaTTL: time.Minute})
	ctx := context.Background()
	for i := range streams {
		ch := string(rune('a'+i%26)) + string(rune('0'+i/26))
		publish(t, e, ch, engine.PublishOptions{HistorySize: 1, HistoryTTL: time.Hour})
		if err := e.AddPresence(ctx, ch, &engine.ClientInfo{Client: "c"}, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(2 * time.Hour)
	for tick, want := 1, streams-batch; want >= 0; tick, want = tick+1, want-batch {
		if n := e.sweep(); n != 2*batch {
			t.Fatalf("tick %d handled %d deadlines, want %d", tick, n, 2*batch)
		}
		if got := countStreams(e); got != want {
			t.Fatalf("after tick %d: %d streams, want %d", tick, got, want)
		}
		if got := countPresenceChannels(e); got != want {
			t.Fatalf("after tick %d: %d presence channels, want %d", tick, got, want)
		}
	}
	if n := e.sweep(); n != 2*(streams%batch) {
		t.Fatalf("last tick handled %d deadlines, want %d", n, 2*(streams%batch))
	}
	if countStreams(e) != 0 || countPresenceChannels(e) != 0 {
		t.Fatalf("expired items left after the janitor finished")
	}
	if n := e.sweep(); n != 0 {
		t.Fatalf("idle tick handled %d deadlines", n)
	}
}

// TestRefreshKeepsOneDeadline checks that refreshing presence or
// publishing often does not grow the janitor's queues.
func TestRefreshKeepsOneDeadline(t *testing.T) {
	e, clock := started(t, Config{Shards: 1})
	ctx := context.Background()
	info := &engine.ClientInfo{Client: "c"}
	for range 100 {
		clock.Advance(time.Second)
		if err := e.AddPresence(ctx, "ch", info, time.Minute); err != nil {
			t.Fatal(err)
		}
		publish(t, e, "ch", engine.PublishOptions{HistorySize: 5, HistoryTTL: time.Minute})
	}
	sh := &e.shards[0]
	if n := sh.presence.expiry.len(); n != 1 {
		t.Errorf("presence queue holds %d deadlines, want 1", n)
	}
	if n := sh.history.expiry.len(); n != 1 {
		t.Errorf("history queue holds %d deadlines, want 1", n)
	}
	// The first deadline is long past its original time but the entries
	// were refreshed: the janitor must reschedule, not delete.
	clock.Advance(30 * time.Second)
	e.sweep()
	if st, _ := e.PresenceStats(ctx, "ch"); st.NumClients != 1 {
		t.Errorf("refreshed presence entry removed")
	}
	if pubs, _ := read(t, e, "ch"); len(pubs) != 5 {
		t.Errorf("%d publications after sweep, want 5", len(pubs))
	}
}

func TestPresenceExpiresWithFakeClock(t *testing.T) {
	e, clock := started(t, Config{})
	ctx := context.Background()
	if err := e.AddPresence(ctx, "ch", &engine.ClientInfo{User: "u", Client: "c"}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	clock.Advance(9 * time.Second)
	if st, _ := e.PresenceStats(ctx, "ch"); st != (engine.PresenceStats{NumClients: 1, NumUsers: 1}) {
		t.Fatalf("stats before expiry %+v", st)
	}
	clock.Advance(time.Second)
	if p, _ := e.Presence(ctx, "ch"); len(p) != 0 {
		t.Fatalf("expired entry returned: %v", p)
	}
	if countPresenceChannels(e) != 0 {
		t.Fatalf("reading expired presence did not drop it")
	}
}

// TestJanitorRunsInBackground checks the real ticker: an expired stream
// goes away without anyone touching it.
func TestJanitorRunsInBackground(t *testing.T) {
	e := New(Config{JanitorInterval: 10 * time.Millisecond, HistoryMetaTTL: 50 * time.Millisecond})
	if err := e.Start(context.Background(), &countingHandler{}); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	publish(t, e, "ch", engine.PublishOptions{HistorySize: 1, HistoryTTL: 20 * time.Millisecond})
	deadline := time.Now().Add(5 * time.Second)
	for countStreams(e) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("janitor did not remove an expired stream")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLifecycleErrors(t *testing.T) {
	ctx := context.Background()
	e := New(Config{})
	if _, err := e.Publish(ctx, "ch", &engine.Publication{}, engine.PublishOptions{}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Publish before Start: %v, want ErrNotStarted", err)
	}
	if err := e.Start(ctx, nil); err == nil {
		t.Error("Start with a nil handler succeeded")
	}
	h := &countingHandler{}
	if err := e.Start(ctx, h); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := e.Start(ctx, h); err == nil {
		t.Error("second Start succeeded")
	}
	if _, err := e.Publish(ctx, "ch", nil, engine.PublishOptions{}); err == nil {
		t.Error("Publish of nil succeeded")
	}
	if err := e.AddPresence(ctx, "ch", &engine.ClientInfo{Client: "c"}, 0); err == nil {
		t.Error("AddPresence with zero ttl succeeded")
	}
	if _, _, err := e.History(ctx, "ch", engine.HistoryRequest{Limit: -2}); err == nil {
		t.Error("History with limit -2 succeeded")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Publish(canceled, "ch", &engine.Publication{}, engine.PublishOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Publish with a canceled context: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := e.Start(ctx, h); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
	if err := New(Config{}).Close(); err != nil {
		t.Errorf("Close before Start: %v", err)
	}
}

// TestPublishCopiesPublication checks that the caller's Publication is not
// changed and that a reused one does not alter history.
func TestPublishCopiesPublication(t *testing.T) {
	e, _ := started(t, Config{})
	pub := &engine.Publication{Data: []byte(`a`), Offset: 99}
	opts := engine.PublishOptions{HistorySize: 10, HistoryTTL: time.Minute}
	if _, err := e.Publish(context.Background(), "ch", pub, opts); err != nil {
		t.Fatal(err)
	}
	if pub.Offset != 99 || pub.Time != 0 {
		t.Errorf("caller's publication changed: %+v", pub)
	}
	pub.Data = []byte(`b`)
	if _, err := e.Publish(context.Background(), "ch", pub, opts); err != nil {
		t.Fatal(err)
	}
	pubs, _ := read(t, e, "ch")
	if len(pubs) != 2 || string(pubs[0].Data) != "a" || pubs[0].Offset != 1 || pubs[1].Offset != 2 {
		t.Errorf("history %v", pubs)
	}
}

// TestHistorySizeChanges checks the ring when a channel's history size is
// reconfigured between publications.
func TestHistorySizeChanges(t *testing.T) {
	e, _ := started(t, Config{})
	for i, size := range []int{3, 3, 3, 3, 20, 20, 20, 20, 20, 20, 20, 20, 2} {
		publish(t, e, "ch", engine.PublishOptions{HistorySize: size, HistoryTTL: time.Minute})
		pubs, pos := read(t, e, "ch")
		want := min(size, i+1)
		if i >= 4 && i < 12 {
			want = min(3+i-3, i+1) // the 3 kept before growing plus the new ones
		}
		if len(pubs) != want || pos.Offset != uint64(i+1) || pubs[len(pubs)-1].Offset != uint64(i+1) {
			t.Fatalf("publication %d with size %d: %d kept, top %d; want %d kept", i+1, size, len(pubs), pos.Offset, want)
		}
		for j := 1; j < len(pubs); j++ {
			if pubs[j].Offset != pubs[j-1].Offset+1 {
				t.Fatalf("publication %d: offsets not consecutive: %d then %d", i+1, pubs[j-1].Offset, pubs[j].Offset)
			}
		}
	}
}
