package postgres

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/heraldhq/herald/engine"
)

var pubData = engine.Publication{Data: []byte(`{"x":1}`)}

// TestManyChannelsSubscribed subscribes one node to 10,000 channels and
// publishes to every one of them from another node, then drops the
// listener so the replay has to look at all of them.
func TestManyChannelsSubscribed(t *testing.T) {
	const channels = 10000
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	rec := newRecorder()
	sub := startEngine(t, testOptions(dsn, schema), rec)
	pub := startEngine(t, testOptions(dsn, schema), newRecorder())
	ctx := t.Context()
	names := make([]string, channels)
	for i := range names {
		names[i] = fmt.Sprintf("many:%d", i)
		if err := sub.Subscribe(ctx, names[i]); err != nil {
			t.Fatal(err)
		}
	}
	publishAll := func(round int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for w := range 16 {
			wg.Go(func() {
				for i := w; i < channels; i += 16 {
					if _, err := pub.Publish(ctx, names[i], &engine.Publication{Data: fmt.Appendf(nil, "%d", round)}, withHistory(5)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	publishAll(1)
	rec.await(t, time.Minute, "one publication on every channel", func() bool {
		for _, ch := range names {
			if len(rec.pubs[ch]) < 1 {
				return false
			}
		}
		return true
	})
	// Publications committed while nobody listens must come back through
	// the replay of all 10,000 channels.
	terminateListener(t, dsn, sub)
	publishAll(2)
	rec.await(t, time.Minute, "two publications on every channel", func() bool {
		for _, ch := range names {
			if len(rec.pubs[ch]) < 2 {
				return false
			}
		}
		return true
	})
	for _, ch := range names {
		got := rec.get(ch)
		if len(got) != 2 || got[0].sp.Offset != 1 || got[1].sp.Offset != 2 || string(got[1].pub.Data) != "2" {
			t.Fatalf("%s: %d deliveries, offsets %v", ch, len(got), offsetsOfDeliveries(got))
		}
	}
}

func offsetsOfDeliveries(ds []delivered) []uint64 {
	out := make([]uint64, len(ds))
	for i, d := range ds {
		out[i] = d.sp.Offset
	}
	return out
}

// TestGapRepaired commits publications whose notifications never arrive,
// as if the listener had missed them, and checks the next live one brings
// them in from the history table, in order.
func TestGapRepaired(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	rec := newRecorder()
	e := startEngine(t, testOptions(dsn, schema), rec)
	ctx := t.Context()
	ch := "gap:" + randomToken(4)
	if err := e.Subscribe(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Publish(ctx, ch, &pubData, withHistory(10)); err != nil {
		t.Fatal(err)
	}
	rec.awaitN(t, ch, 1)
	conn := sqlConn(t, dsn)
	// Offsets 2 and 3: stored, never notified.
	sqlExec(t, conn, `WITH a AS (SELECT * FROM `+schema+`.alloc(ARRAY[$1], ARRAY[2], ARRAY[10], ARRAY[60000::bigint], ARRAY[60000::bigint]))
		INSERT INTO `+schema+`.history (channel, pub_offset, time_ms, data)
		SELECT a.channel, a.top_offset - g, 0, convert_to('"silent"', 'UTF8') FROM a, generate_series(0, 1) g`, ch)
	if _, err := e.Publish(ctx, ch, &pubData, withHistory(10)); err != nil {
		t.Fatal(err)
	}
	got := rec.awaitN(t, ch, 4)
	if !slices.Equal(offsetsOfDeliveries(got), []uint64{1, 2, 3, 4}) || string(got[1].pub.Data) != `"silent"` {
		t.Fatalf("deliveries %v, want offsets 1..4 with the silent ones in the middle", offsetsOfDeliveries(got))
	}
	if testutil.ToFloat64(e.metrics.gapRepairs) != 1 {
		t.Errorf("gap repairs %v, want 1", testutil.ToFloat64(e.metrics.gapRepairs))
	}
}

// TestStreamExpiry covers the ways a stream loses its publications: the
// history TTL (the position stays), the meta TTL (a new epoch from offset
// 1, old rows gone), and a shrinking size.
func TestStreamExpiry(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	e := startEngine(t, testOptions(dsn, schema), newRecorder())
	ctx := t.Context()
	read := func(ch string) ([]*engine.Publication, engine.StreamPosition) {
		t.Helper()
		pubs, pos, err := e.History(ctx, ch, engine.HistoryRequest{Limit: -1, MetaTTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return pubs, pos
	}
	publish := func(ch string, opts engine.PublishOptions) engine.StreamPosition {
		t.Helper()
		sp, err := e.Publish(ctx, ch, &pubData, opts)
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}

	t.Run("MetaTTL", func(t *testing.T) {
		ch := "meta:" + randomToken(4)
		opts := engine.PublishOptions{HistorySize: 10, HistoryTTL: 400 * time.Millisecond, HistoryMetaTTL: 800 * time.Millisecond}
		var first engine.StreamPosition
		for range 3 {
			first = publish(ch, opts)
		}
		time.Sleep(time.Second)
		sp := publish(ch, opts)
		if sp.Offset != 1 || sp.Epoch == first.Epoch {
			t.Fatalf("after the meta TTL: %+v, want offset 1 in a new epoch (old %q)", sp, first.Epoch)
		}
		if pubs, pos := read(ch); !slices.Equal(offsetsOf(pubs), []uint64{1}) || pos != sp {
			t.Fatalf("history %v at %+v, want [1] at %+v", offsetsOf(pubs), pos, sp)
		}
	})

	t.Run("MetaTTLOnRead", func(t *testing.T) {
		ch := "meta-read:" + randomToken(4)
		_, before := read(ch)
		time.Sleep(1100 * time.Millisecond)
		if _, after := read(ch); after.Epoch == before.Epoch || after.Offset != 0 {
			t.Fatalf("position read after the meta TTL %+v, before %+v: want a new epoch", after, before)
		}
	})

	t.Run("SizeShrinks", func(t *testing.T) {
		ch := "shrink:" + randomToken(4)
		for range 10 {
			publish(ch, withHistory(10))
		}
		top := publish(ch, withHistory(3))
		if pubs, pos := read(ch); !slices.Equal(offsetsOf(pubs), []uint64{9, 10, 11}) || pos != top {
			t.Fatalf("history %v at %+v, want [9 10 11]", offsetsOf(pubs), pos)
		}
	})

	t.Run("JanitorDeletesExpiredRows", func(t *testing.T) {
		ch := "janitor:" + randomToken(4)
		for range 5 {
			publish(ch, engine.PublishOptions{HistorySize: 10, HistoryTTL: 300 * time.Millisecond})
		}
		conn := sqlConn(t, dsn)
		deadline := time.Now().Add(10 * time.Second)
		for {
			var n int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.history WHERE channel = $1`, ch).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d expired rows still in the table", n)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if sp := publish(ch, withHistory(10)); sp.Offset != 6 {
			t.Fatalf("publication after the sweep got offset %d, want 6", sp.Offset)
		}
	})
}

// TestUnsubscribeStopsDelivery checks that a node stops delivering a
// channel it unsubscribed from, and resumes after subscribing again.
func TestUnsubscribeStopsDelivery(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	rec := newRecorder()
	opts := testOptions(dsn, schema)
	opts.ListenerPing = 100 * time.Millisecond // the listener idles through pings below
	e := startEngine(t, opts, rec)
	ctx := t.Context()
	ch, marker := "unsub:"+randomToken(4), "marker:"+randomToken(4)
	for _, c := range []string{ch, marker} {
		if err := e.Subscribe(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Publish(ctx, ch, &pubData, withHistory(10)); err != nil {
		t.Fatal(err)
	}
	rec.awaitN(t, ch, 1)
	if err := e.Unsubscribe(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Publish(ctx, ch, &pubData, withHistory(10)); err != nil {
		t.Fatal(err)
	}
	// Several idle pings pass; the connection must still deliver.
	time.Sleep(400 * time.Millisecond)
	if _, err := e.Publish(ctx, marker, &pubData, engine.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.awaitN(t, marker, 1)
	if n := len(rec.get(ch)); n != 1 {
		t.Fatalf("%d deliveries after Unsubscribe, want the 1 from before", n)
	}
	if err := e.Subscribe(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Publish(ctx, ch, &pubData, withHistory(10)); err != nil {
		t.Fatal(err)
	}
	got := rec.awaitN(t, ch, 2)
	if got[1].sp.Offset != 3 {
		t.Fatalf("after subscribing again delivered offset %d, want 3", got[1].sp.Offset)
	}
}

// TestForgetNode checks that forgetting a node (as every hub does once it
// stops hearing the node's heartbeats) deletes that node's presence
// entries, long before their TTL, and no other node's; a node never
// forgets itself.
func TestForgetNode(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a := startEngine(t, testOptions(dsn, schema), newRecorder())
	b := startEngine(t, testOptions(dsn, schema), newRecorder())
	ctx := t.Context()
	ch := "presence-node:" + randomToken(4)
	if err := a.AddPresence(ctx, ch, &engine.ClientInfo{User: "u", Client: "c1"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := b.AddPresence(ctx, ch, &engine.ClientInfo{User: "v", Client: "c2"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := b.ForgetNode(ctx, b.NodeID()); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.ForgetNode(ctx, a.NodeID()); err != nil {
		t.Fatal(err)
	}
	p, err := b.Presence(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p["c1"]; ok {
		t.Error("the forgotten node's presence is still there")
	}
	if _, ok := p["c2"]; !ok {
		t.Error("the live node's entry went too (a node forgot itself)")
	}
	if err := b.ForgetNode(ctx, a.NodeID()); err != nil {
		t.Errorf("forgetting a node twice: %v", err)
	}
}
