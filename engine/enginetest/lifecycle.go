package enginetest

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

func (s *suite) lifecycle(t *testing.T) {
	t.Run("CloseThenErrClosed", s.testClose)
}

// testClose checks that every call after Close fails with engine.ErrClosed,
// including the optional parts the engine claims to have.
func (s *suite) testClose(t *testing.T) {
	n := s.start(t)
	ch := channel(t, "a")
	n.subscribe(t, ch)
	n.publish(t, ch, []byte(`1`), s.historyOpts(10))
	n.rec.awaitPubs(t, ch, 1)
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	c := ctx(t)
	info := &engine.ClientInfo{User: "u", Client: "c"}
	calls := map[string]func() error{
		"Publish": func() error {
			_, err := n.Publish(c, ch, &engine.Publication{Data: []byte(`2`)}, s.historyOpts(10))
			return err
		},
		"PublishJoin":    func() error { return n.PublishJoin(c, ch, info) },
		"PublishLeave":   func() error { return n.PublishLeave(c, ch, info) },
		"PublishControl": func() error { return n.PublishControl(c, []byte("x"), "") },
		"Subscribe":      func() error { return n.Subscribe(c, ch) },
		"Unsubscribe":    func() error { return n.Unsubscribe(c, ch) },
	}
	if s.caps.History {
		calls["History"] = func() error {
			_, _, err := n.History(c, ch, engine.HistoryRequest{Limit: -1})
			return err
		}
		calls["RemoveHistory"] = func() error { return n.RemoveHistory(c, ch) }
	}
	if s.caps.Presence {
		calls["AddPresence"] = func() error { return n.AddPresence(c, ch, info, time.Minute) }
		calls["RemovePresence"] = func() error { return n.RemovePresence(c, ch, "c") }
		calls["Presence"] = func() error {
			_, err := n.Presence(c, ch)
			return err
		}
		calls["PresenceStats"] = func() error {
			_, err := n.PresenceStats(c, ch)
			return err
		}
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("%s after Close: %v, want engine.ErrClosed", name, err)
		}
	}
	if got := len(n.rec.pubsOf(ch)); got != 1 {
		t.Errorf("%d publications delivered, want only the one before Close", got)
	}
}
