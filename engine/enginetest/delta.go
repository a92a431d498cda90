package enginetest

import (
	"bytes"
	"testing"

	"github.com/heraldhq/herald/engine"
)

// testDelta checks that Publication.Delta (the server API's per-publish
// delta flag, which the delivering node's hub reads) reaches a subscriber
// node's handler with live delivery, through every live path the engine
// has, as ExceptClient does, and that a publication without it comes
// without it: a flag stuck on, or lost, changes what subscribers receive.
func (s *suite) testDelta(t *testing.T) {
	sub := s.start(t)
	pub := sub
	if s.caps.Cluster {
		pub = s.start(t)
	}
	ch := channel(t, "a")
	sub.subscribe(t, ch)
	large := bytes.Repeat([]byte("x"), 64<<10)
	want := []struct {
		pub  *engine.Publication
		opts engine.PublishOptions
	}{
		{&engine.Publication{Data: []byte(`"no history"`), Delta: true}, engine.PublishOptions{}},
		{&engine.Publication{Data: []byte(`"history"`), Delta: true}, s.historyOpts(10)},
		{&engine.Publication{Data: []byte(`"none"`)}, s.historyOpts(10)},
		{&engine.Publication{Data: large, Info: &engine.ClientInfo{User: "u", Client: "c"}, Delta: true}, s.historyOpts(10)},
		{&engine.Publication{Data: []byte(`"except"`), ExceptClient: "client-1", Delta: true}, s.historyOpts(10)},
		{&engine.Publication{Data: []byte(`"none again"`)}, engine.PublishOptions{}},
	}
	for _, w := range want {
		if _, err := pub.Publish(ctx(t), ch, w.pub, w.opts); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	got := sub.rec.awaitPubs(t, ch, len(want))
	for i, d := range got {
		if diff := pubDiff(want[i].pub, d.pub); diff != "" {
			t.Errorf("delivery %d: %s", i, diff)
		}
	}
}
