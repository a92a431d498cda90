package enginetest

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// testMapIdempotency checks MapPublishOptions.IdempotencyKey: a change
// with a key seen in its window fails with ErrMapDuplicate, returns the
// first change's position and appends nothing, on publications and
// removals alike; a change refused for another reason does not take its
// key.
func (s *suite) testMapIdempotency(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	mb := mapBroker(t, n)
	idem := func(key string) engine.MapPublishOptions {
		o := mapOpts(10)
		o.IdempotencyKey, o.IdempotentResultTTL = key, time.Minute
		return o
	}
	first := n.mapPublish(t, ch, "a", []byte(`1`), idem("i1"))
	sp, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "a", Data: []byte(`2`)}, idem("i1"))
	if !errors.Is(err, engine.ErrMapDuplicate) || sp != first {
		t.Fatalf("retry with i1: %+v, %v; want %+v and ErrMapDuplicate", sp, err, first)
	}
	ifNew := idem("i2")
	ifNew.KeyMode = engine.MapKeyIfNew
	if _, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "a", Data: []byte(`3`)}, ifNew); !errors.Is(err, engine.ErrMapKeyExists) {
		t.Fatalf("if_new with i2 on a key in the state: %v, want ErrMapKeyExists", err)
	}
	second := n.mapPublish(t, ch, "b", []byte(`4`), idem("i2")) // i2 was not taken by the refusal
	removed := n.mapRemove(t, ch, "b", idem("i3"))
	sp, err = mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "b", Removed: true}, idem("i3"))
	if !errors.Is(err, engine.ErrMapDuplicate) || sp != removed {
		t.Fatalf("removal retried with i3: %+v, %v; want %+v and ErrMapDuplicate", sp, err, removed)
	}
	if second.Offset != first.Offset+1 || removed.Offset != second.Offset+1 {
		t.Fatalf("offsets %d, %d, %d: the duplicates and the refusal appended", first.Offset, second.Offset, removed.Offset)
	}
	if st, _, _ := n.readState(t, ch, 10); stateString(st) != `map[a:1]` {
		t.Fatalf("state: %s", stateString(st))
	}
	bad := mapOpts(10)
	bad.IdempotencyKey = "i4" // no window
	if _, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "a", Data: []byte(`5`)}, bad); err == nil {
		t.Fatal("an idempotency key without IdempotentResultTTL was taken")
	}
}

// testMapExpectedPosition checks MapPublishOptions.ExpectedPosition: a
// change goes through only when the key was set by the change at the
// expected offset in the stream's epoch; otherwise it fails with
// ErrMapPositionMismatch, returns the current position and appends
// nothing. A key not in the state never matches.
func (s *suite) testMapExpectedPosition(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	mb := mapBroker(t, n)
	at := func(sp engine.StreamPosition) engine.MapPublishOptions {
		o := mapOpts(10)
		o.ExpectedPosition = &sp
		return o
	}
	mismatch := func(what string, pub *engine.Publication, opts engine.MapPublishOptions, top engine.StreamPosition) {
		t.Helper()
		sp, err := mb.MapPublish(ctx(t), ch, pub, opts)
		if !errors.Is(err, engine.ErrMapPositionMismatch) || sp != top {
			t.Fatalf("%s: %+v, %v; want %+v and ErrMapPositionMismatch", what, sp, err, top)
		}
	}
	a1 := n.mapPublish(t, ch, "a", []byte(`1`), mapOpts(10))
	mismatch("a missing key", &engine.Publication{Key: "b", Data: []byte(`x`)}, at(a1), a1)
	a2 := n.mapPublish(t, ch, "a", []byte(`2`), at(a1))
	mismatch("a stale offset", &engine.Publication{Key: "a", Data: []byte(`x`)}, at(a1), a2)
	mismatch("another epoch", &engine.Publication{Key: "a", Data: []byte(`x`)}, at(engine.StreamPosition{Offset: a2.Offset, Epoch: a2.Epoch + "x"}), a2)
	mismatch("a stale removal", &engine.Publication{Key: "a", Removed: true}, at(a1), a2)
	gone := n.mapRemove(t, ch, "a", at(a2))
	if gone.Offset != a2.Offset+1 {
		t.Fatalf("removal at %+v, want offset %d (the mismatches appended nothing)", gone, a2.Offset+1)
	}
	mismatch("a removed key", &engine.Publication{Key: "a", Data: []byte(`x`)}, at(a2), gone)
	if st, _, _ := n.readState(t, ch, 10); len(st) != 0 {
		t.Fatalf("state: %s", stateString(st))
	}
}

// testMapStateKey checks MapStateRequest.Key: the page holds that key's
// entry alone, with the offset of the change that set it, or none once it
// is removed; the position is the stream's top either way.
func (s *suite) testMapStateKey(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	mb := mapBroker(t, n)
	n.mapPublish(t, ch, "a", []byte(`1`), mapOpts(10))
	b := n.mapPublish(t, ch, "b", []byte(`2`), mapOpts(10))
	n.mapPublish(t, ch, "c", []byte(`3`), mapOpts(10))
	read := func(key string) engine.MapStatePage {
		t.Helper()
		page, err := mb.MapState(ctx(t), ch, engine.MapStateRequest{Key: key, Limit: 1, Cursor: "a"})
		if err != nil {
			t.Fatalf("MapState(key %q): %v", key, err)
		}
		return page
	}
	page := read("b")
	if len(page.Entries) != 1 || page.Entries[0].Key != "b" || string(page.Entries[0].Data) != `2` || page.Entries[0].Offset != b.Offset || page.Cursor != "" || page.Position.Offset != b.Offset+1 {
		t.Fatalf("key b: %+v, want its entry at offset %d and the top %d", page, b.Offset, b.Offset+1)
	}
	gone := n.mapRemove(t, ch, "b", mapOpts(10))
	if page := read("b"); len(page.Entries) != 0 || page.Position != gone {
		t.Fatalf("key b removed: %+v, want no entry at %+v", page, gone)
	}
	if page := read("zz"); len(page.Entries) != 0 {
		t.Fatalf("key never set: %+v", page)
	}
}
