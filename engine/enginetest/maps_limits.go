package enginetest

import (
	"errors"
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
