package enginetest

import (
	"testing"

	"github.com/heraldhq/herald/engine"
)

// testPresenceJoin checks engine.PresenceJoiner: when the join reaches a
// node (another one in a cluster), the presence entry is there, as when
// AddPresence and PublishJoin are called one after the other.
func (s *suite) testPresenceJoin(t *testing.T) {
	a := s.start(t)
	pj, ok := engine.PresenceJoinerOf(a.Engine)
	if !ok {
		t.Skip("engine is not an engine.PresenceJoiner")
	}
	b := a
	if s.caps.Cluster {
		b = s.start(t)
	}
	for _, info := range []*engine.ClientInfo{
		{User: "u1", Client: "c1", ConnInfo: []byte(`{"a":1}`), ChanInfo: []byte(`{"b":2}`)},
		{Client: "anonymous"},
	} {
		ch := channel(t, "a")
		b.subscribe(t, ch)
		if err := pj.AddPresenceJoin(ctx(t), ch, info, presenceTTL); err != nil {
			t.Fatalf("AddPresenceJoin(%q, %q): %v", ch, info.Client, err)
		}
		b.rec.await(t, eventTimeout, "the join on "+ch, func() bool { return len(b.rec.joins[ch]) == 1 })
		if got := b.rec.joinsOf(ch)[0]; !sameInfo(info, got) {
			t.Fatalf("join of %+v, want %+v", got, info)
		}
		checkPresence(t, b, ch, []*engine.ClientInfo{info}, 1)
	}
}
