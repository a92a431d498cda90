package enginetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/heraldhq/herald/engine"
)

// testMapMaxKeys checks MapPublishOptions.MaxKeys: a new key over the
// bound fails with ErrMapKeyLimit and changes nothing; a change of a key
// in the state, a removal, and a new key after a removal made room go
// through.
func (s *suite) testMapMaxKeys(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	opts := mapOpts(10)
	opts.MaxKeys = 2
	n.mapPublish(t, ch, "a", []byte(`1`), opts)
	last := n.mapPublish(t, ch, "b", []byte(`2`), opts)
	sp, err := mapBroker(t, n).MapPublish(ctx(t), ch, &engine.Publication{Key: "c", Data: []byte(`3`)}, opts)
	if !errors.Is(err, engine.ErrMapKeyLimit) {
		t.Fatalf("a third key with MaxKeys 2: %+v, %v; want ErrMapKeyLimit", sp, err)
	}
	if st, _, _ := n.readState(t, ch, 10); stateString(st) != `map[a:1 b:2]` {
		t.Fatalf("state after the refusal: %s", stateString(st))
	}
	if sp := n.mapPublish(t, ch, "a", []byte(`11`), opts); sp.Offset != last.Offset+1 {
		t.Fatalf("a change of a key in the state at %+v, want offset %d (the refusal appended nothing)", sp, last.Offset+1)
	}
	n.mapRemove(t, ch, "b", opts)
	n.mapPublish(t, ch, "c", []byte(`3`), opts)
	if st, _, _ := n.readState(t, ch, 10); stateString(st) != `map[a:11 c:3]` {
		t.Fatalf("state: %s", stateString(st))
	}
}

// testMapTags checks that a change's tags stay with the key: in the
// state, the stream and live delivery, on another node too in a cluster;
// a removal carries the tags it was given.
func (s *suite) testMapTags(t *testing.T) {
	sub := s.start(t)
	pub := sub
	if s.caps.Cluster {
		pub = s.start(t)
	}
	ch := channel(t, "m")
	sub.subscribe(t, ch)
	mb := mapBroker(t, pub)
	tags := map[string]string{"team": "eng", "n": "1"}
	if _, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "a", Data: []byte(`1`), Tags: tags}, mapOpts(10)); err != nil {
		t.Fatal(err)
	}
	if _, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "a", Removed: true, Tags: map[string]string{"team": "eng"}}, mapOpts(10)); err != nil {
		t.Fatal(err)
	}
	if _, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "b", Data: []byte(`2`), Tags: tags}, mapOpts(10)); err != nil {
		t.Fatal(err)
	}
	page, err := mb.MapState(ctx(t), ch, engine.MapStateRequest{Limit: 10})
	if err != nil || len(page.Entries) != 1 || fmt.Sprint(page.Entries[0].Tags) != fmt.Sprint(tags) {
		t.Fatalf("state: %v, %v; want b with tags %v", page.Entries, err, tags)
	}
	want := []string{fmt.Sprint(tags), "map[team:eng]", fmt.Sprint(tags)}
	pubs, _ := pub.history(t, ch, engine.HistoryRequest{Since: &engine.StreamPosition{}, Limit: -1})
	live := sub.rec.awaitPubs(t, ch, 3)
	for i, w := range want {
		if i >= len(pubs) || fmt.Sprint(pubs[i].Tags) != w || fmt.Sprint(live[i].pub.Tags) != w {
			t.Fatalf("change %d: stream %v, live %v; want tags %s", i, pubs, live[i].pub.Tags, w)
		}
	}
}

// testMapKeyMode checks MapPublishOptions.KeyMode: if_new sets only a
// key not in the state, if_exists only one in it; a refused publication
// fails with ErrMapKeyExists or ErrMapKeyNotFound and appends nothing.
func (s *suite) testMapKeyMode(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	mb := mapBroker(t, n)
	ifNew, ifExists := mapOpts(10), mapOpts(10)
	ifNew.KeyMode, ifExists.KeyMode = engine.MapKeyIfNew, engine.MapKeyIfExists
	if _, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "a", Data: []byte(`1`)}, ifExists); !errors.Is(err, engine.ErrMapKeyNotFound) {
		t.Fatalf("if_exists on a missing key: %v, want ErrMapKeyNotFound", err)
	}
	first := n.mapPublish(t, ch, "a", []byte(`1`), ifNew)
	if _, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "a", Data: []byte(`2`)}, ifNew); !errors.Is(err, engine.ErrMapKeyExists) {
		t.Fatalf("if_new on a key in the state: %v, want ErrMapKeyExists", err)
	}
	if sp := n.mapPublish(t, ch, "a", []byte(`3`), ifExists); sp.Offset != first.Offset+1 {
		t.Fatalf("if_exists on a key in the state at %+v, want offset %d (the refusals appended nothing)", sp, first.Offset+1)
	}
	if st, _, _ := n.readState(t, ch, 10); stateString(st) != `map[a:3]` {
		t.Fatalf("state: %s", stateString(st))
	}
}

// testMapVersion checks MapPublishOptions.Version: a version not above the
// key's in the same epoch fails with ErrMapVersion and appends nothing; a
// higher one, one of another epoch, and any after a removal go through; a
// change without a version keeps the key's.
func (s *suite) testMapVersion(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "m")
	mb := mapBroker(t, n)
	at := func(v uint64, epoch string) engine.MapPublishOptions {
		o := mapOpts(10)
		o.Version, o.VersionEpoch = v, epoch
		return o
	}
	n.mapPublish(t, ch, "a", []byte(`5`), at(5, "e1"))
	for _, v := range []uint64{5, 4} {
		if _, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "a", Data: []byte(`x`)}, at(v, "e1")); !errors.Is(err, engine.ErrMapVersion) {
			t.Fatalf("version %d over 5: %v, want ErrMapVersion", v, err)
		}
	}
	n.mapPublish(t, ch, "a", []byte(`6`), at(6, "e1"))
	n.mapPublish(t, ch, "a", []byte(`7`), mapOpts(10)) // no version: the key keeps 6
	if _, err := mb.MapPublish(ctx(t), ch, &engine.Publication{Key: "a", Data: []byte(`x`)}, at(6, "e1")); !errors.Is(err, engine.ErrMapVersion) {
		t.Fatalf("version 6 after a change without a version over 6: %v, want ErrMapVersion", err)
	}
	n.mapPublish(t, ch, "a", []byte(`1`), at(1, "e2")) // another epoch
	n.mapRemove(t, ch, "a", mapOpts(10))
	last := n.mapPublish(t, ch, "a", []byte(`0`), at(1, "e2"))
	if st, _, _ := n.readState(t, ch, 10); stateString(st) != `map[a:0]` || last.Offset != 6 {
		t.Fatalf("state %s at %+v, want a=0 at offset 6", stateString(st), last)
	}
}
