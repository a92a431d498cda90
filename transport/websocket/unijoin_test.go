package websocket

import (
	"testing"

	gorilla "github.com/gorilla/websocket"
)

// TestUniJoinPushes: with UniJoinPushes the pushes of one hub frame go in
// one text frame, newline-separated (Centrifugo's
// uni_websocket.join_push_messages); a reply with no push form is left
// out without a stray separator.
func TestUniJoinPushes(t *testing.T) {
	forEachPoller(t, func(t *testing.T, p Poller) {
		h := newUniHarness(t, Config{Poller: p, UniJoinPushes: true})
		c, s := h.dial("")
		if err := c.WriteMessage(gorilla.TextMessage, []byte(`{"token":"abc"}`)); err != nil {
			t.Fatal(err)
		}
		s.connectRequest(t)
		frame := []byte(`{"id":1,"connect":{"client":"c1","version":"0.1.0","ping":25}}` + "\n" +
			`{"push":{"channel":"news","pub":{"data":{"n":1},"offset":6}}}` + "\n" + `{}`)
		if err := s.u.WriteFrame(frame); err != nil {
			t.Fatal(err)
		}
		want := `{"connect":{"client":"c1","version":"0.1.0","ping":25}}` + "\n" + `{"channel":"news","pub":{"data":{"n":1},"offset":6}}` + "\n" + `{}`
		if got := readText(t, c); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}
