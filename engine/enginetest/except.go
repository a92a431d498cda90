package enginetest

import (
	"bytes"
	"testing"

	"github.com/heraldhq/herald/engine"
)

// testExceptClient checks that Publication.ExceptClient reaches a
// subscriber node's handler with live delivery: on another node when the
// engine is a cluster, through every live path the engine has (without
// history, with history, and a payload large enough to travel apart from
// its notification or message), and that a publication without it comes
// without it.
func (s *suite) testExceptClient(t *testing.T) {
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
		{&engine.Publication{Data: []byte(`"no history"`), ExceptClient: "client-1"}, engine.PublishOptions{}},
		{&engine.Publication{Data: []byte(`"history"`), ExceptClient: "client-2"}, s.historyOpts(10)},
		{&engine.Publication{Data: []byte(`"none"`)}, s.historyOpts(10)},
		{&engine.Publication{Data: large, Info: &engine.ClientInfo{User: "u", Client: "c"}, ExceptClient: "client-3"}, s.historyOpts(10)},
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
