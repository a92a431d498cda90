package redis

import (
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/engine/internal/wire"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// silentPublish appends a publication to ch's stream through the publish
// script but announces it on a pub/sub channel nobody listens to, as if
// the node's subscribing connection had been down when it was published.
func silentPublish(t *testing.T, e *Engine, ch string, data string, size int) engine.StreamPosition {
	t.Helper()
	p := &engine.Publication{Data: []byte(data), Time: time.Now().UnixMilli()}
	v, err := publishScript.Run(t.Context(), e.client, e.keys.historyKeys(ch),
		wire.AppendPublication(nil, p), size, millis(time.Minute), millis(time.Minute), newEpoch(), e.keys.prefix+":void").Slice()
	if err != nil {
		t.Fatalf("silent publish: %v", err)
	}
	return engine.StreamPosition{Offset: uint64(v[0].(int64)), Epoch: v[1].(string)}
}

func publishHistory(t *testing.T, e *Engine, ch, data string, size int) engine.StreamPosition {
	t.Helper()
	sp, err := e.Publish(t.Context(), ch, &engine.Publication{Data: []byte(data)},
		engine.PublishOptions{HistorySize: size, HistoryTTL: time.Minute})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	return sp
}

// TestGapRepair checks that a live publication that arrives after
// publications the node never saw makes it deliver those first.
func TestGapRepair(t *testing.T) {
	rec := enginetest.NewRecorder()
	e := startEngine(t, testOptions(t), rec)
	ch := "gap_" + randomToken(4)
	if err := e.Subscribe(t.Context(), ch); err != nil {
		t.Fatal(err)
	}
	publishHistory(t, e, ch, "1", 10)
	silentPublish(t, e, ch, "2", 10)
	silentPublish(t, e, ch, "3", 10)
	publishHistory(t, e, ch, "4", 10)
	got := rec.WaitForPublications(t, ch, 4, 10*time.Second)
	checkOffsets(t, ch, got, 4)
	for i, d := range got {
		if string(d.Pub.Data) != fmt.Sprint(i+1) {
			t.Errorf("delivery %d carries %q", i, d.Pub.Data)
		}
	}
	if st := e.Stats(); st.GapRepairs != 1 || st.Replayed != 2 || st.Lost != 0 {
		t.Errorf("stats %+v, want 1 repair replaying 2, none lost", st)
	}
}

// TestGapRepairTrimmed checks that publications trimmed from history
// before a gap was repaired are counted as lost and skipped, and delivery
// continues with what history still has.
func TestGapRepairTrimmed(t *testing.T) {
	rec := enginetest.NewRecorder()
	e := startEngine(t, testOptions(t), rec)
	ch := "trim_" + randomToken(4)
	if err := e.Subscribe(t.Context(), ch); err != nil {
		t.Fatal(err)
	}
	publishHistory(t, e, ch, "1", 3)
	for i := 2; i <= 10; i++ {
		silentPublish(t, e, ch, fmt.Sprint(i), 3)
	}
	publishHistory(t, e, ch, "11", 3) // history keeps 9, 10, 11
	got := rec.WaitForPublications(t, ch, 4, 10*time.Second)
	var offs []uint64
	for _, d := range got {
		offs = append(offs, d.Pub.Offset)
	}
	if fmt.Sprint(offs) != "[1 9 10 11]" {
		t.Fatalf("delivered offsets %v, want [1 9 10 11]", offs)
	}
	if st := e.Stats(); st.Lost != 7 {
		t.Errorf("stats %+v, want 7 lost", st)
	}
}

// TestReplayAfterResubscribe checks the replay of many channels after a
// reconnect: publications stored while the node could not hear them are
// delivered, in order, before anything newer.
func TestReplayAfterResubscribe(t *testing.T) {
	const channels = 300
	opts := testOptions(t)
	opts.NodeID = "replay-" + randomToken(4)
	opts.ReplayBatch = 2 // so that replays take several reads
	rec := enginetest.NewRecorder()
	e := startEngine(t, opts, rec)
	names := make([]string, channels)
	for i := range names {
		names[i] = fmt.Sprintf("replay_%d_%s", i, randomToken(3))
		if err := e.Subscribe(t.Context(), names[i]); err != nil {
			t.Fatal(err)
		}
		publishHistory(t, e, names[i], "1", 10)
	}
	for _, ch := range names {
		rec.WaitForPublications(t, ch, 1, 10*time.Second)
		for i := 2; i <= 6; i++ {
			silentPublish(t, e, ch, fmt.Sprint(i), 10)
		}
	}
	if killSubscribers(t, e.client, opts.NodeID) == 0 {
		t.Fatal("no subscribing connection to kill")
	}
	for _, ch := range names {
		checkOffsets(t, ch, rec.WaitForPublications(t, ch, 6, 30*time.Second), 6)
	}
	// Live delivery goes on after the replay, without duplicates.
	for _, ch := range names[:10] {
		publishHistory(t, e, ch, "7", 10)
		checkOffsets(t, ch, rec.WaitForPublications(t, ch, 7, 10*time.Second), 7)
	}
	if st := e.Stats(); st.Resubscribed < channels || st.Replayed != 5*channels || st.Lost != 0 {
		t.Errorf("stats %+v, want >= %d resubscribed, %d replayed, none lost", st, channels, 5*channels)
	}
}

// TestNewEpoch checks that a stream lost in Redis (here deleted) and
// started again is delivered from its new offset 1 in its new epoch.
func TestNewEpoch(t *testing.T) {
	rec := enginetest.NewRecorder()
	e := startEngine(t, testOptions(t), rec)
	ch := "epoch_" + randomToken(4)
	if err := e.Subscribe(t.Context(), ch); err != nil {
		t.Fatal(err)
	}
	first := publishHistory(t, e, ch, "1", 10)
	publishHistory(t, e, ch, "2", 10)
	rec.WaitForPublications(t, ch, 2, 10*time.Second)
	if err := e.client.Del(t.Context(), e.keys.historyKeys(ch)...).Err(); err != nil {
		t.Fatal(err)
	}
	second := publishHistory(t, e, ch, "new 1", 10)
	if second.Offset != 1 || second.Epoch == first.Epoch {
		t.Fatalf("after the loss the stream is at %+v, before at %+v", second, first)
	}
	got := rec.WaitForPublications(t, ch, 3, 10*time.Second)
	if d := got[2]; d.Position != second || string(d.Pub.Data) != "new 1" {
		t.Errorf("third delivery %q at %+v, want \"new 1\" at %+v", d.Pub.Data, d.Position, second)
	}
}

// healthCheckEngine starts an engine that checks its subscribing
// connections every 100 ms, with a channel named after prefix subscribed
// and a first publication on it delivered.
func healthCheckEngine(t *testing.T, prefix string) (Config, *Engine, *enginetest.Recorder, string) {
	t.Helper()
	opts := testOptions(t)
	opts.HealthInterval = 100 * time.Millisecond
	rec := enginetest.NewRecorder()
	e := startEngine(t, opts, rec)
	ch := prefix + "_" + randomToken(4)
	if err := e.Subscribe(t.Context(), ch); err != nil {
		t.Fatal(err)
	}
	publishHistory(t, e, ch, "1", 10)
	rec.WaitForPublications(t, ch, 1, 10*time.Second)
	return opts, e, rec, ch
}

// TestHealthCheckReplacesSilentConnection pauses every Redis client
// for 3 s, so the subscribing connections stop answering pings; the
// engine replaces them (after 3 health intervals, 300 ms; the pause is
// long so that a loaded machine's late health check still sees it) and
// delivery goes on.
func TestHealthCheckReplacesSilentConnection(t *testing.T) {
	_, e, rec, ch := healthCheckEngine(t, "health")
	if err := e.client.Do(t.Context(), "client", "pause", 3000, "all").Err(); err != nil {
		t.Fatalf("CLIENT PAUSE: %v", err)
	}
	testenv.Eventually(t, "a subscribing connection to be replaced", 10*time.Second, func() bool {
		return e.Stats().Replaced > 0
	})
	publishHistory(t, e, ch, "2", 10)
	checkOffsets(t, ch, rec.WaitForPublications(t, ch, 2, 10*time.Second), 2)
}

// TestHealthCheckNotHeldByAnotherConnection: while go-redis holds one
// subscribing connection in a handshake that gets no answer (here through
// a black-holed proxy; go-redis keeps the PubSub's lock through it, so a
// ping on that connection waits as long), the silence of another
// connection, the one carrying the channel, is still noticed within a few
// health intervals and the connection replaced. With one health loop for
// every connection, the loop waited on the first one's ping.
func TestHealthCheckNotHeldByAnotherConnection(t *testing.T) {
	opts, e, rec, ch := healthCheckEngine(t, "held")

	// Every other subscribing connection goes through a black hole: its
	// run loop re-establishes it and waits in the handshake.
	proxy := testenv.NewProxy(t, opts.Addrs[0]) // closed before the engine: the handshakes end
	proxy.Blackhole()
	held := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	t.Cleanup(func() { _ = held.Close() })
	carrier := e.subscriberOf(ch)
	for _, s := range e.subs {
		if s == carrier {
			continue
		}
		s.mu.Lock()
		old := s.ps
		s.ps = held.Subscribe(e.bgCtx)
		s.mu.Unlock()
		_ = old.Close()
	}
	testenv.Eventually(t, "the black-holed handshakes to start", 10*time.Second, func() bool {
		return proxy.Conns() == len(e.subs)-1
	})

	carrier.mu.Lock()
	before := carrier.ps
	carrier.mu.Unlock()
	if err := e.client.Do(t.Context(), "client", "pause", 3000, "all").Err(); err != nil {
		t.Fatalf("CLIENT PAUSE: %v", err)
	}
	paused := time.Now()
	testenv.Eventually(t, "the carrying connection to be replaced", 10*time.Second, func() bool {
		carrier.mu.Lock()
		defer carrier.mu.Unlock()
		return carrier.ps != before
	})
	// Three health intervals and a check; the pause (3 s) would end first
	// if the check waited for the black-holed ones.
	if took := time.Since(paused); took > 2*time.Second {
		t.Errorf("the silent connection was replaced after %v", took)
	}
	publishHistory(t, e, ch, "2", 10)
	checkOffsets(t, ch, rec.WaitForPublications(t, ch, 2, 10*time.Second), 2)
}
