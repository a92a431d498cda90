package enginetest

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

func (s *suite) presence(t *testing.T) {
	t.Run("AddListStats", s.testPresenceAdd)
	t.Run("Remove", s.testPresenceRemove)
	t.Run("RefreshReplacesInfo", s.testPresenceRefresh)
	t.Run("Expiry", s.testPresenceExpiry)
	t.Run("EmptyChannel", s.testPresenceEmpty)
	t.Run("ChannelsIndependent", s.testPresenceChannels)
	t.Run("PresenceJoin", s.testPresenceJoin)
}

// presenceTTL is long enough never to expire during a test.
const presenceTTL = time.Minute

func (n *node) addPresence(t *testing.T, ch string, info *engine.ClientInfo, ttl time.Duration) {
	t.Helper()
	if err := n.AddPresence(ctx(t), ch, info, ttl); err != nil {
		t.Fatalf("AddPresence(%q, %s): %v", ch, info.Client, err)
	}
}

// checkPresence compares ch's presence and stats with want.
func checkPresence(t *testing.T, n *node, ch string, want []*engine.ClientInfo, wantUsers int) {
	t.Helper()
	got, err := n.Presence(ctx(t), ch)
	if err != nil {
		t.Fatalf("Presence(%q): %v", ch, err)
	}
	if msg := presenceDiff(got, want); msg != "" {
		t.Errorf("Presence: %s", msg)
	}
	st, err := n.PresenceStats(ctx(t), ch)
	if err != nil {
		t.Fatalf("PresenceStats(%q): %v", ch, err)
	}
	if st != (engine.PresenceStats{NumClients: len(want), NumUsers: wantUsers}) {
		t.Errorf("PresenceStats %+v, want %d clients and %d users", st, len(want), wantUsers)
	}
}

func presenceDiff(got map[string]*engine.ClientInfo, want []*engine.ClientInfo) string {
	if len(got) != len(want) {
		ids := make([]string, 0, len(got))
		for id := range got {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		return fmt.Sprintf("clients %v, want %d", ids, len(want))
	}
	for _, w := range want {
		if g := got[w.Client]; !sameInfo(w, g) {
			return fmt.Sprintf("client %q is %s, want %s", w.Client, infoString(g), infoString(w))
		}
	}
	return ""
}

// testPresenceAdd also fixes how users are counted: distinct user ids, with
// anonymous clients (user "") together counting as one user, as Centrifugo
// does.
func (s *suite) testPresenceAdd(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	infos := []*engine.ClientInfo{
		{User: "u1", Client: "c1", ConnInfo: []byte(`{"n":1}`), ChanInfo: []byte(`{"c":1}`)},
		{User: "u1", Client: "c2"},
		{User: "u2", Client: "c3", ConnInfo: []byte(`{"n":3}`)},
		{User: "", Client: "c4"},
		{User: "", Client: "c5"},
	}
	for _, info := range infos {
		n.addPresence(t, ch, info, presenceTTL)
	}
	checkPresence(t, n, ch, infos, 3)
}

func (s *suite) testPresenceRemove(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	c1 := &engine.ClientInfo{User: "u1", Client: "c1"}
	c2 := &engine.ClientInfo{User: "u1", Client: "c2"}
	c3 := &engine.ClientInfo{User: "u2", Client: "c3"}
	for _, info := range []*engine.ClientInfo{c1, c2, c3} {
		n.addPresence(t, ch, info, presenceTTL)
	}
	remove := func(id string) {
		t.Helper()
		if err := n.RemovePresence(ctx(t), ch, id); err != nil {
			t.Fatalf("RemovePresence(%q): %v", id, err)
		}
	}
	remove("c2")
	checkPresence(t, n, ch, []*engine.ClientInfo{c1, c3}, 2)
	remove("c1")
	checkPresence(t, n, ch, []*engine.ClientInfo{c3}, 1)
	remove("unknown")
	checkPresence(t, n, ch, []*engine.ClientInfo{c3}, 1)
	remove("c3")
	checkPresence(t, n, ch, nil, 0)
	n.addPresence(t, ch, c1, presenceTTL)
	checkPresence(t, n, ch, []*engine.ClientInfo{c1}, 1)
}

func (s *suite) testPresenceRefresh(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	n.addPresence(t, ch, &engine.ClientInfo{User: "u1", Client: "c1", ConnInfo: []byte(`"old"`)}, presenceTTL)
	fresh := &engine.ClientInfo{User: "u1", Client: "c1", ConnInfo: []byte(`"new"`)}
	n.addPresence(t, ch, fresh, presenceTTL)
	checkPresence(t, n, ch, []*engine.ClientInfo{fresh}, 1)
}

// testPresenceExpiry checks that entries expire ttl after the last add:
// "refreshed" is added before "expiring" with the same short ttl, then
// refreshed with a long one, so once "expiring" is gone the first add of
// "refreshed" has expired too and only the refresh keeps it.
func (s *suite) testPresenceExpiry(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	refreshed := &engine.ClientInfo{User: "u1", Client: "refreshed"}
	expiring := &engine.ClientInfo{User: "u2", Client: "expiring"}
	n.addPresence(t, ch, refreshed, time.Second)
	n.addPresence(t, ch, expiring, time.Second)
	n.addPresence(t, ch, refreshed, presenceTTL)
	Eventually(t, 15*time.Second, func() string {
		got, err := n.Presence(ctx(t), ch)
		if err != nil {
			t.Fatalf("Presence: %v", err)
		}
		if _, ok := got["expiring"]; ok {
			return "entry not expired"
		}
		return ""
	})
	checkPresence(t, n, ch, []*engine.ClientInfo{refreshed}, 1)
}

func (s *suite) testPresenceEmpty(t *testing.T) {
	n := s.start(t)
	checkPresence(t, n, channel(t, "a"), nil, 0)
}

func (s *suite) testPresenceChannels(t *testing.T) {
	n := s.start(t)
	a, b := channel(t, "a"), channel(t, "b")
	info := &engine.ClientInfo{User: "u1", Client: "c1"}
	n.addPresence(t, a, info, presenceTTL)
	checkPresence(t, n, b, nil, 0)
	if err := n.RemovePresence(ctx(t), b, "c1"); err != nil {
		t.Fatalf("RemovePresence: %v", err)
	}
	checkPresence(t, n, a, []*engine.ClientInfo{info}, 1)
}
