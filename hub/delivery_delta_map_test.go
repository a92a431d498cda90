package hub

import (
	"testing"

	"github.com/heraldhq/herald/engine"
)

func mapPub(key string, offset uint64, data string) *engine.Publication {
	return &engine.Publication{Key: key, Offset: offset, Data: []byte(data)}
}

// The node offers a key's value as a base only when it can vouch that no
// change of the key was missed in between.
func TestMapDeltaBases(t *testing.T) {
	pos := func(o uint64) engine.StreamPosition { return engine.StreamPosition{Offset: o, Epoch: "e"} }
	base := func(st *deltaStep) string {
		if st == nil || !st.base.valid() {
			return "none"
		}
		return string(st.baseData)
	}
	var mk mapKeys
	// State read at 10 (a set at 3, b at 7); the live flow starts at 11.
	mk.seed("e", []*engine.Publication{mapPub("a", 3, "a3"), mapPub("b", 7, "b7")}, 10, 10, 0)
	if got := base(mk.advanceKey(mapPub("a", 0, "a11"), pos(11))); got != "a3" {
		t.Fatalf("a's base after the state: %s", got)
	}
	// A gap (13 never seen): b's value from before it cannot be vouched for.
	if got := base(mk.advanceKey(mapPub("b", 0, "b14"), pos(14))); got != "none" {
		t.Fatalf("b's base after a gap: %s", got)
	}
	// A value seen after the gap is.
	if got := base(mk.advanceKey(mapPub("b", 0, "b15"), pos(15))); got != "b14" {
		t.Fatalf("b's base after the gap: %s", got)
	}
	// a was last seen at 11, before the gap: no base.
	if got := base(mk.advanceKey(mapPub("a", 0, "a16"), pos(16))); got != "none" {
		t.Fatalf("a's base across the gap: %s", got)
	}

	// A state read that the live flow starts well after vouches for nothing.
	var late mapKeys
	late.seed("e", []*engine.Publication{mapPub("a", 3, "a3")}, 10, 10, 0)
	if got := base(late.advanceKey(mapPub("a", 0, "a20"), pos(20))); got != "none" {
		t.Fatalf("a's base 10 changes after the read: %s", got)
	}
	// Unless a stream read covers the range in between.
	var covered mapKeys
	covered.seed("e", []*engine.Publication{mapPub("a", 3, "a3"), mapPub("b", 4, "b4")}, 10, 10, 0)
	covered.seed("e", []*engine.Publication{mapPub("b", 12, "b12")}, 10, 19, 0)
	if got := base(covered.advanceKey(mapPub("a", 0, "a20"), pos(20))); got != "a3" {
		t.Fatalf("a's base with the stream read: %s", got)
	}
	if got := base(covered.advanceKey(mapPub("b", 0, "b21"), pos(21))); got != "b12" {
		t.Fatalf("b's base with the stream read: %s", got)
	}
	// A new epoch forgets everything.
	if got := base(covered.advanceKey(mapPub("a", 0, "a1"), engine.StreamPosition{Offset: 1, Epoch: "f"})); got != "none" {
		t.Fatalf("a's base in a new epoch: %s", got)
	}
}
