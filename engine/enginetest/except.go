package enginetest

import (
	"bytes"
	"testing"

	"github.com/heraldhq/herald/engine"
)

// livePub is a publication to make, with its options.
type livePub struct {
	pub  *engine.Publication
	opts engine.PublishOptions
}

// checkDelivered publishes each of want in one channel from one node (not
// the subscriber's when the engine is a cluster) and checks that the
// subscriber node's handler receives each as it was published.
func (s *suite) checkDelivered(t *testing.T, want []livePub) {
	t.Helper()
	sub := s.start(t)
	pub := sub
	if s.caps.Cluster {
		pub = s.start(t)
	}
	ch := channel(t, "a")
	sub.subscribe(t, ch)
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

// testExceptClient checks that Publication.ExceptClient reaches a
// subscriber node's handler with live delivery: on another node when the
// engine is a cluster, through every live path the engine has (without
// history, with history, and a payload large enough to travel apart from
// its notification or message), and that a publication without it comes
// without it.
func (s *suite) testExceptClient(t *testing.T) {
	large := bytes.Repeat([]byte("x"), 64<<10)
	s.checkDelivered(t, []livePub{
		{&engine.Publication{Data: []byte(`"no history"`), ExceptClient: "client-1"}, engine.PublishOptions{}},
		{&engine.Publication{Data: []byte(`"history"`), ExceptClient: "client-2"}, s.historyOpts(10)},
		{&engine.Publication{Data: []byte(`"none"`)}, s.historyOpts(10)},
		{&engine.Publication{Data: large, Info: &engine.ClientInfo{User: "u", Client: "c"}, ExceptClient: "client-3"}, s.historyOpts(10)},
		{&engine.Publication{Data: []byte(`"none again"`)}, engine.PublishOptions{}},
	})
}
