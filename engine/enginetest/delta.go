package enginetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// testDelta checks that Publication.Delta (the server API's per-publish
// delta flag, which the delivering node's hub reads) reaches a subscriber
// node's handler with live delivery, through every live path the engine
// has, as ExceptClient does, and that a publication without it comes
// without it: a flag stuck on, or lost, changes what subscribers receive.
func (s *suite) testDelta(t *testing.T) {
	large := bytes.Repeat([]byte("x"), 64<<10)
	s.checkDelivered(t, []livePub{
		{&engine.Publication{Data: []byte(`"no history"`), Delta: true}, engine.PublishOptions{}},
		{&engine.Publication{Data: []byte(`"history"`), Delta: true}, s.historyOpts(10)},
		{&engine.Publication{Data: []byte(`"none"`)}, s.historyOpts(10)},
		{&engine.Publication{Data: large, Info: &engine.ClientInfo{User: "u", Client: "c"}, Delta: true}, s.historyOpts(10)},
		{&engine.Publication{Data: []byte(`"except"`), ExceptClient: "client-1", Delta: true}, s.historyOpts(10)},
		{&engine.Publication{Data: []byte(`"none again"`)}, engine.PublishOptions{}},
	})
}

// testMapDelta checks that Publication.Delta of a map change reaches a
// subscriber node's handler as a stream publication's does: alone, with
// an idempotency key (a transaction of its own on some engines), on a
// value large enough to travel apart from its notification, and not on
// the changes without it.
func (s *suite) testMapDelta(t *testing.T) {
	sub := s.start(t)
	pub := sub
	if s.caps.Cluster {
		pub = s.start(t)
	}
	ch := channel(t, "m")
	sub.subscribe(t, ch)
	mb := mapBroker(t, pub)
	idem := mapOpts(10)
	idem.IdempotencyKey, idem.IdempotentResultTTL = "once", time.Minute
	large := bytes.Repeat([]byte{0xff, 'x', 0}, 64<<10/3)
	want := []struct {
		pub  *engine.Publication
		opts engine.MapPublishOptions
	}{
		{&engine.Publication{Key: "a", Data: []byte(`1`), Delta: true}, mapOpts(10)},
		{&engine.Publication{Key: "a", Data: []byte(`2`)}, mapOpts(10)},
		{&engine.Publication{Key: "b", Data: []byte(`3`), Delta: true}, idem},
		{&engine.Publication{Key: "big", Data: large, Delta: true}, mapOpts(10)},
		{&engine.Publication{Key: "a", Removed: true}, mapOpts(10)},
	}
	for _, w := range want {
		if _, err := mb.MapPublish(ctx(t), ch, w.pub, w.opts); err != nil {
			t.Fatalf("MapPublish %q: %v", w.pub.Key, err)
		}
	}
	got := sub.rec.awaitPubs(t, ch, len(want))
	for i, d := range got {
		if diff := pubDiff(want[i].pub, d.pub); diff != "" {
			t.Errorf("change %d: %s", i, diff)
		}
	}
}
