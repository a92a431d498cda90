package enginetest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

func (s *suite) maps(t *testing.T) {
	t.Run("StatePages", s.testMapStatePages)
	t.Run("RemoveAndLive", s.testMapRemove)
	t.Run("SkipMissingRemove", s.testMapSkipMissingRemove)
	t.Run("SkipMissingRemovePosition", s.testMapSkipMissingRemovePosition)
	t.Run("TouchIfExists", s.testMapTouch)
	t.Run("KeyTTL", s.testMapKeyTTL)
	t.Run("KeysExpiringTogether", s.testMapKeysExpiringTogether)
	t.Run("SnapshotThenStreamNoGap", s.testMapNoGap)
	t.Run("LargeValue", s.testMapLargeValue)
	t.Run("Clear", s.testMapClear)
	t.Run("BadCalls", s.testMapBadCalls)
	t.Run("MaxKeys", s.testMapMaxKeys)
	t.Run("Tags", s.testMapTags)
	t.Run("Delta", s.testMapDelta)
	t.Run("KeyMode", s.testMapKeyMode)
	t.Run("Version", s.testMapVersion)
	t.Run("Idempotency", s.testMapIdempotency)
	t.Run("ExpectedPosition", s.testMapExpectedPosition)
	t.Run("StateKey", s.testMapStateKey)
}

// mapOpts keeps a stream of size changes for a minute.
func mapOpts(size int) engine.MapPublishOptions {
	return engine.MapPublishOptions{StreamSize: size, StreamTTL: time.Minute}
}

func mapBroker(t *testing.T, n *node) engine.MapBroker {
	t.Helper()
	mb, ok := engine.MapsOf(n.Engine)
	if !ok {
		t.Fatalf("%T claims Capabilities.Maps but engine.MapsOf finds no map state in it", n.Engine)
	}
	return mb
}

func (n *node) mapPublish(t *testing.T, ch, key string, data []byte, opts engine.MapPublishOptions) engine.StreamPosition {
	t.Helper()
	sp, err := mapBroker(t, n).MapPublish(ctx(t), ch, &engine.Publication{Key: key, Data: data}, opts)
	if err != nil {
		t.Fatalf("MapPublish(%q, %q): %v", ch, key, err)
	}
	return sp
}

func (n *node) mapRemove(t *testing.T, ch, key string, opts engine.MapPublishOptions) engine.StreamPosition {
	t.Helper()
	sp, err := mapBroker(t, n).MapPublish(ctx(t), ch, &engine.Publication{Key: key, Removed: true}, opts)
	if err != nil {
		t.Fatalf("MapPublish(%q, %q, removed): %v", ch, key, err)
	}
	return sp
}

// readState reads every page of ch's state with the given page size and
// returns the entries by key and the position of the first page.
func (n *node) readState(t *testing.T, ch string, limit int) (map[string][]byte, engine.StreamPosition, int) {
	t.Helper()
	mb := mapBroker(t, n)
	state := map[string][]byte{}
	var first engine.StreamPosition
	cursor := ""
	pages := 0
	for {
		page, err := mb.MapState(ctx(t), ch, engine.MapStateRequest{Cursor: cursor, Limit: limit})
		if err != nil {
			t.Fatalf("MapState(%q, cursor %q): %v", ch, cursor, err)
		}
		if pages == 0 {
			first = page.Position
		} else if page.Position.Epoch != first.Epoch {
			t.Fatalf("page %d in epoch %q, the first in %q", pages, page.Position.Epoch, first.Epoch)
		}
		pages++
		if len(page.Entries) > limit {
			t.Fatalf("page of %d entries, limit %d", len(page.Entries), limit)
		}
		for _, p := range page.Entries {
			if _, dup := state[p.Key]; dup {
				t.Fatalf("key %q on two pages", p.Key)
			}
			if p.Removed {
				t.Fatalf("state entry %q marked removed", p.Key)
			}
			state[p.Key] = p.Data
		}
		if page.Cursor == "" {
			return state, first, pages
		}
		if pages > 100000 {
			t.Fatalf("state of %q does not end", ch)
		}
		cursor = page.Cursor
	}
}

// testMapStatePages checks that the state reads back in pages, each key
// once, and that every change is in the stream with its key.
func (s *suite) testMapStatePages(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	n.subscribe(t, ch)
	want := map[string][]byte{}
	var last engine.StreamPosition
	for i := range 25 {
		key := fmt.Sprintf("k%02d", i)
		data := fmt.Appendf(nil, `{"v":%d}`, i)
		want[key] = data
		last = n.mapPublish(t, ch, key, data, mapOpts(100))
	}
	// Publishing a key again replaces its value.
	want["k03"] = []byte(`{"v":"again"}`)
	last = n.mapPublish(t, ch, "k03", want["k03"], mapOpts(100))
	if last.Offset != 26 || last.Epoch == "" {
		t.Fatalf("26th change at %+v, want offset 26", last)
	}
	for _, limit := range []int{1, 7, 25, 1000} {
		got, pos, pages := n.readState(t, ch, limit)
		if !maps.EqualFunc(got, want, func(a, b []byte) bool { return string(a) == string(b) }) {
			t.Fatalf("limit %d: state %s, want %s", limit, stateString(got), stateString(want))
		}
		if pos != last {
			t.Fatalf("limit %d: position %+v, want %+v", limit, pos, last)
		}
		if wantPages := (25 + limit - 1) / limit; pages < wantPages {
			t.Fatalf("limit %d: %d pages, want at least %d", limit, pages, wantPages)
		}
	}
	pubs, _ := n.history(t, ch, engine.HistoryRequest{Limit: -1})
	if len(pubs) != 26 || pubs[25].Key != "k03" || pubs[0].Key != "k00" {
		t.Fatalf("stream holds %d changes, want 26 with keys", len(pubs))
	}
	got := n.rec.awaitPubs(t, ch, 26)
	if got[25].pub.Key != "k03" || string(got[25].pub.Data) != `{"v":"again"}` || got[25].pos != last {
		t.Fatalf("last live change %q %s at %+v", got[25].pub.Key, got[25].pub.Data, got[25].pos)
	}
}

func stateString(m map[string][]byte) string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return fmt.Sprint(out)
}

// testMapRemove checks that a removal leaves the state, and reaches the
// stream and live delivery with its key, marked removed and without data,
// on another node too when the engine is a cluster.
func (s *suite) testMapRemove(t *testing.T) {
	sub := s.start(t)
	pub := sub
	if s.caps.Cluster {
		pub = s.start(t)
	}
	ch := channel(t, "m")
	sub.subscribe(t, ch)
	pub.mapPublish(t, ch, "a", []byte(`1`), mapOpts(10))
	pub.mapPublish(t, ch, "b", []byte(`2`), mapOpts(10))
	sp := pub.mapRemove(t, ch, "a", mapOpts(10))
	got, pos, _ := pub.readState(t, ch, 10)
	if len(got) != 1 || string(got["b"]) != "2" || pos != sp {
		t.Fatalf("state after removing a: %s at %+v, want {b:2} at %+v", stateString(got), pos, sp)
	}
	live := sub.rec.awaitPubs(t, ch, 3)
	if d := pubDiff(&engine.Publication{Key: "a", Removed: true}, live[2].pub); d != "" || live[2].pos != sp {
		t.Fatalf("live removal: %s at %+v, want at %+v", d, live[2].pos, sp)
	}
	if d := pubDiff(&engine.Publication{Key: "b", Data: []byte(`2`)}, live[1].pub); d != "" {
		t.Fatalf("live change: %s", d)
	}
	pubs, _ := pub.history(t, ch, engine.HistoryRequest{Since: &engine.StreamPosition{Offset: 2}, Limit: -1})
	if len(pubs) != 1 || pubs[0].Key != "a" || !pubs[0].Removed || len(pubs[0].Data) != 0 {
		t.Fatalf("stream after offset 2: %d changes, want the removal of a", len(pubs))
	}
	if st, err := mapBroker(t, pub).MapStats(ctx(t), ch); err != nil || st.NumKeys != 1 {
		t.Fatalf("MapStats: %+v, %v; want 1 key", st, err)
	}
}

// testMapSkipMissingRemove checks both removal behaviours for a key that
// is not there: with SkipMissingRemove it fails with ErrMapKeyNotFound
// (a position mismatch under a compare-and-swap) and appends nothing, as
// Centrifugo suppresses it with key_not_found; without, it is a change.
func (s *suite) testMapSkipMissingRemove(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	first := n.mapPublish(t, ch, "a", []byte(`1`), mapOpts(10))
	mb := mapBroker(t, n)
	opts := mapOpts(10)
	opts.SkipMissingRemove = true
	missing := &engine.Publication{Key: "missing", Removed: true}
	if sp, err := mb.MapPublish(ctx(t), ch, missing, opts); !errors.Is(err, engine.ErrMapKeyNotFound) {
		t.Fatalf("skipped removal: %+v, %v; want ErrMapKeyNotFound", sp, err)
	}
	cas := opts
	cas.ExpectedPosition = &first
	if sp, err := mb.MapPublish(ctx(t), ch, missing, cas); !errors.Is(err, engine.ErrMapPositionMismatch) || sp != first {
		t.Fatalf("skipped removal with an expected position: %+v, %v; want %+v and ErrMapPositionMismatch", sp, err, first)
	}
	if sp := n.mapRemove(t, ch, "missing", mapOpts(10)); sp.Offset != first.Offset+1 {
		t.Fatalf("removal of a missing key at %+v, want a change at offset %d (nothing appended before)", sp, first.Offset+1)
	}
	if sp := n.mapRemove(t, ch, "a", opts); sp.Offset != first.Offset+2 {
		t.Fatalf("removal of a present key with SkipMissingRemove at %+v, want offset %d", sp, first.Offset+2)
	}
}

// testMapSkipMissingRemovePosition checks that a removal skipped for a
// missing key answers with the stream's current position, as Centrifugo's
// brokers answer key_not_found (centrifuge v0.40.1 map_broker_memory.go
// remove, map_broker_add.lua), with or without an idempotency key.
func (s *suite) testMapSkipMissingRemovePosition(t *testing.T) {
	n := s.start(t)
	mb := mapBroker(t, n)
	opts := mapOpts(10)
	opts.SkipMissingRemove = true
	missing := &engine.Publication{Key: "missing", Removed: true}

	fresh := channel(t, "fresh")
	if sp, err := mb.MapPublish(ctx(t), fresh, missing, opts); !errors.Is(err, engine.ErrMapKeyNotFound) || sp.Offset != 0 {
		t.Fatalf("skipped removal on a channel without changes: %+v, %v; want offset 0 and ErrMapKeyNotFound", sp, err)
	}

	ch := channel(t, "m")
	n.mapPublish(t, ch, "a", []byte(`1`), mapOpts(10))
	top := n.mapPublish(t, ch, "b", []byte(`2`), mapOpts(10))
	if sp, err := mb.MapPublish(ctx(t), ch, missing, opts); !errors.Is(err, engine.ErrMapKeyNotFound) || sp != top {
		t.Fatalf("skipped removal: %+v, %v; want the stream's position %+v and ErrMapKeyNotFound", sp, err, top)
	}
	idem := opts
	idem.IdempotencyKey, idem.IdempotentResultTTL = "skip-"+randomHex(4), time.Minute
	if sp, err := mb.MapPublish(ctx(t), ch, missing, idem); !errors.Is(err, engine.ErrMapKeyNotFound) || sp != top {
		t.Fatalf("skipped removal with an idempotency key: %+v, %v; want %+v and ErrMapKeyNotFound", sp, err, top)
	}
	removed := n.mapRemove(t, ch, "a", opts)
	if sp, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "a", Removed: true}, opts); !errors.Is(err, engine.ErrMapKeyNotFound) || sp != removed {
		t.Fatalf("second removal of a: %+v, %v; want the first removal's position %+v and ErrMapKeyNotFound", sp, err, removed)
	}
}

// testMapKeyTTL checks that a key with a TTL goes away on its own, as a
// removal in the stream delivered live, and that publishing it again
// before then keeps it.
func (s *suite) testMapKeyTTL(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	n.subscribe(t, ch)
	ttl := mapOpts(10)
	ttl.KeyTTL = 500 * time.Millisecond
	n.mapPublish(t, ch, "short", []byte(`1`), ttl)
	n.mapPublish(t, ch, "forever", []byte(`2`), mapOpts(10))
	live := n.rec.awaitPubs(t, ch, 3)
	if d := pubDiff(&engine.Publication{Key: "short", Removed: true}, live[2].pub); d != "" {
		t.Fatalf("third change on %s: %s, want the expiry of short", ch, d)
	}
	got, pos, _ := n.readState(t, ch, 10)
	if len(got) != 1 || got["forever"] == nil || pos.Offset != 3 {
		t.Fatalf("state after expiry: %s at %+v, want {forever} at offset 3", stateString(got), pos)
	}
}

// testMapKeysExpiringTogether: more keys than the stream keeps expire
// close together. Each removal is delivered live with its own offset, in
// order, after its key's publication, and the stream holds the last of
// the changes (the engines batch the removals and append only the entries
// the stream's size keeps). The keys expire in one sweep when publishing
// them took less than a sweep; on a loaded machine (a full test run on
// two cores took over 500 ms for the 40) the first removals come between
// the last publications, which changes none of this.
func (s *suite) testMapKeysExpiringTogether(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	n.subscribe(t, ch)
	const keys, size = 40, 5
	opts := mapOpts(size)
	opts.KeyTTL = 500 * time.Millisecond
	for i := range keys {
		n.mapPublish(t, ch, fmt.Sprintf("k%02d", i), []byte(`1`), opts)
	}
	live := n.rec.awaitPubs(t, ch, 2*keys)
	published := make(map[string]bool, keys)
	gone := make(map[string]bool, keys)
	for i, d := range live {
		p := d.pub
		fresh := !p.Removed && !published[p.Key]
		expired := p.Removed && published[p.Key] && !gone[p.Key]
		if p.Offset != uint64(i+1) || !fresh && !expired {
			t.Fatalf("change %d on %s: key %q removed %v at offset %d; want offset %d, the key's first publication or its only removal after it",
				i+1, ch, p.Key, p.Removed, p.Offset, i+1)
		}
		published[p.Key] = true
		gone[p.Key] = gone[p.Key] || p.Removed
	}
	if len(published) != keys || len(gone) != keys {
		t.Fatalf("%d keys published and %d removed, want %d of each", len(published), len(gone), keys)
	}
	pubs, pos := n.history(t, ch, engine.HistoryRequest{Limit: -1})
	if pos.Offset != 2*keys || len(pubs) != size {
		t.Fatalf("history after expiry: %d entries at offset %d, want the last %d at offset %d", len(pubs), pos.Offset, size, 2*keys)
	}
	for i, p := range pubs {
		want := live[2*keys-size+i].pub
		if p.Removed != want.Removed || p.Offset != want.Offset || p.Key != want.Key {
			t.Fatalf("history entry %d: key %q removed %v at offset %d, want key %q removed %v at offset %d",
				i, p.Key, p.Removed, p.Offset, want.Key, want.Removed, want.Offset)
		}
	}
	if got, _, _ := n.readState(t, ch, 100); len(got) != 0 {
		t.Fatalf("state after expiry: %s, want empty", stateString(got))
	}
}

// testMapNoGap pages through the state while a writer changes it, then
// applies the stream from the first page's position: the result must be
// the final state exactly.
func (s *suite) testMapNoGap(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	const keys = 200
	for i := range keys {
		n.mapPublish(t, ch, fmt.Sprintf("k%03d", i), []byte(`0`), mapOpts(10000))
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var writes int
	wg.Add(1)
	go func() {
		defer wg.Done()
		mb := mapBroker(t, n)
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i > 2000 {
				return
			}
			key := fmt.Sprintf("k%03d", (i*7)%(keys+50)) // some new keys too
			p := &engine.Publication{Key: key, Data: fmt.Appendf(nil, "%d", i)}
			if i%5 == 0 {
				p = &engine.Publication{Key: key, Removed: true}
			}
			if _, err := mb.MapPublish(ctx(t), ch, p, mapOpts(10000)); err != nil {
				t.Errorf("MapPublish: %v", err)
				return
			}
			writes = i
		}
	}()
	state, first, _ := n.readState(t, ch, 13)
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}
	pubs, top := n.history(t, ch, engine.HistoryRequest{Since: &first, Limit: -1})
	if top.Epoch != first.Epoch {
		t.Fatalf("epoch changed from %q to %q", first.Epoch, top.Epoch)
	}
	for i, p := range pubs {
		if p.Offset != first.Offset+uint64(i)+1 {
			t.Fatalf("stream after %d: change %d at offset %d", first.Offset, i, p.Offset)
		}
		if p.Removed {
			delete(state, p.Key)
		} else {
			state[p.Key] = p.Data
		}
	}
	final, _, _ := n.readState(t, ch, 1000)
	if !maps.EqualFunc(state, final, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatalf("snapshot plus stream (%d writes) gives %d keys, the state holds %d: %s\nwant %s", writes, len(state), len(final), stateString(state), stateString(final))
	}
}

// testMapClear checks that clearing drops the keys and starts a new epoch.
func (s *suite) testMapClear(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	before := n.mapPublish(t, ch, "a", []byte(`1`), mapOpts(10))
	if err := mapBroker(t, n).MapClear(ctx(t), ch); err != nil {
		t.Fatalf("MapClear: %v", err)
	}
	got, pos, _ := n.readState(t, ch, 10)
	if len(got) != 0 || pos.Epoch == before.Epoch || pos.Offset != 0 {
		t.Fatalf("after clear: %s at %+v, want nothing at offset 0 of a new epoch (was %+v)", stateString(got), pos, before)
	}
}

// testMapBadCalls checks that calls the contract does not allow fail
// instead of corrupting the state.
func (s *suite) testMapBadCalls(t *testing.T) {
	n := s.start(t)
	mb := mapBroker(t, n)
	ch := channel(t, "m")
	if _, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Data: []byte(`1`)}, mapOpts(10)); err == nil {
		t.Error("MapPublish without a key: no error")
	}
	if _, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "a", Data: []byte(`1`)}, engine.MapPublishOptions{}); err == nil {
		t.Error("MapPublish without a stream: no error")
	}
	if _, err := mb.MapState(ctx(t), ch, engine.MapStateRequest{Limit: 0}); err == nil {
		t.Error("MapState with limit 0: no error")
	}
}

// testMapTouch checks that TouchIfExists sets a missing key as a change,
// and for a present key only restarts its TTL: no change, no delivery,
// and the key outlives its first TTL.
func (s *suite) testMapTouch(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	n.subscribe(t, ch)
	opts := mapOpts(10)
	// Touched every 300 ms, the key has 2.7 s to spare: a touch that a
	// loaded machine delays past a TTL of 1.5 s (a -race run beside other
	// suites took 5.7 s for 2.5 s of touches) let the key expire.
	opts.KeyTTL = 3 * time.Second
	opts.TouchIfExists = true
	first := n.mapPublish(t, ch, "k", []byte(`1`), opts)
	if first.Offset != 1 {
		t.Fatalf("touch of a missing key at %+v, want the change at offset 1", first)
	}
	deadline := time.Now().Add(opts.KeyTTL + time.Second)
	for time.Now().Before(deadline) {
		if sp := n.mapPublish(t, ch, "k", []byte(`2`), opts); sp != first {
			t.Fatalf("touch of a present key at %+v, want the unchanged %+v", sp, first)
		}
		time.Sleep(300 * time.Millisecond) // touching is what is tested: at a steady pace, within the TTL
	}
	got, pos, _ := n.readState(t, ch, 10)
	if string(got["k"]) != "1" || pos != first {
		t.Fatalf("after touching past the first TTL: %s at %+v, want {k:1} at %+v", stateString(got), pos, first)
	}
	if pubs := n.rec.pubsOf(ch); len(pubs) != 1 {
		t.Fatalf("%d deliveries, want the first change only", len(pubs))
	}
	// Untouched, it expires.
	live := n.rec.awaitPubs(t, ch, 2)
	if d := pubDiff(&engine.Publication{Key: "k", Removed: true}, live[1].pub); d != "" {
		t.Fatalf("after the touches stop: %s", d)
	}
}

// testMapLargeValue checks a value too large for one notification or
// message (64 KiB, binary) on every path: live on another node when the
// engine is a cluster, in the state, and in the stream.
func (s *suite) testMapLargeValue(t *testing.T) {
	sub := s.start(t)
	pub := sub
	if s.caps.Cluster {
		pub = s.start(t)
	}
	ch := channel(t, "m")
	sub.subscribe(t, ch)
	large := bytes.Repeat([]byte{0xff, 'x', 0}, 64<<10/3)
	sp := pub.mapPublish(t, ch, "big", large, mapOpts(10))
	live := sub.rec.awaitPubs(t, ch, 1)
	if d := pubDiff(&engine.Publication{Key: "big", Data: large}, live[0].pub); d != "" || live[0].pos != sp {
		t.Fatalf("live: %s at %+v, want at %+v", d, live[0].pos, sp)
	}
	got, _, _ := pub.readState(t, ch, 10)
	if !bytes.Equal(got["big"], large) {
		t.Fatalf("state holds %d bytes, want %d", len(got["big"]), len(large))
	}
	pubs, _ := sub.history(t, ch, engine.HistoryRequest{Limit: -1})
	if len(pubs) != 1 || !bytes.Equal(pubs[0].Data, large) || pubs[0].Key != "big" {
		t.Fatalf("stream: %d changes", len(pubs))
	}
}
