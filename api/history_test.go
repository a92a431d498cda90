package api_test

import (
	"fmt"
	"testing"

	"github.com/heraldhq/herald/api"
)

func TestHistory(t *testing.T) {
	n := startNode(t, api.Config{})
	// Before any publication the stream has a position: offset 0 and an
	// epoch, and always the publications array.
	epoch := epochOf(t, n, "chat")
	n.expect(t, "history", `{"channel":"chat"}`, `{"result":{"publications":[],"epoch":"`+epoch+`","offset":0}}`)
	for i := 1; i <= 5; i++ {
		n.call(t, "publish", fmt.Sprintf(`{"channel":"chat","data":{"i":%d}}`, i))
	}
	pub := func(i int) string { return fmt.Sprintf(`{"data":{"i":%d},"offset":%d}`, i, i) }
	tail := `],"epoch":"` + epoch + `","offset":5}}`
	for _, c := range []struct{ req, want string }{
		// No limit: the position only.
		{`{"channel":"chat"}`, `{"result":{"publications":[` + tail},
		{`{"channel":"chat","limit":-1}`, `{"result":{"publications":[` + pub(1) + "," + pub(2) + "," + pub(3) + "," + pub(4) + "," + pub(5) + tail},
		{`{"channel":"chat","limit":2}`, `{"result":{"publications":[` + pub(1) + "," + pub(2) + tail},
		{`{"channel":"chat","limit":2,"reverse":true}`, `{"result":{"publications":[` + pub(5) + "," + pub(4) + tail},
		// since is exclusive, forward and backward.
		{`{"channel":"chat","limit":-1,"since":{"offset":3,"epoch":"` + epoch + `"}}`, `{"result":{"publications":[` + pub(4) + "," + pub(5) + tail},
		{`{"channel":"chat","limit":-1,"since":{"offset":3}}`, `{"result":{"publications":[` + pub(4) + "," + pub(5) + tail},
		{`{"channel":"chat","limit":-1,"reverse":true,"since":{"offset":3,"epoch":"` + epoch + `"}}`, `{"result":{"publications":[` + pub(2) + "," + pub(1) + tail},
	} {
		n.expect(t, "history", c.req, c.want)
	}
}

func TestHistoryErrors(t *testing.T) {
	n := startNode(t, api.Config{})
	epoch := epochOf(t, n, "chat")
	for _, c := range []struct {
		body string
		code int
		msg  string
	}{
		{`{}`, 107, "channel required"},
		{`{"channel":"plain:chat"}`, 108, `not available: history is off in the namespace of channel "plain:chat"`},
		{`{"channel":"nope:chat"}`, 102, `unknown channel: namespace "nope" is not configured`},
		{`{"channel":"chat","since":{"offset":1,"epoch":"other"}}`, 112, `unrecoverable position: since.epoch "other" is not the stream's epoch "` + epoch + `"`},
		{`{"channel":"chat","reverse":true,"since":{"offset":0}}`, 107, "since.offset: must be positive with reverse (since is exclusive)"},
		{`{"channel":"chat","limit":-2}`, 107, "limit: want -1 (all), 0 (position only) or a positive number, got -2"},
	} {
		if got := n.expectError(t, "history", c.body, c.code); got != c.msg {
			t.Errorf("%s: message %q, want %q", c.body, got, c.msg)
		}
	}
}

func TestHistoryRemove(t *testing.T) {
	n := startNode(t, api.Config{})
	n.call(t, "publish", `{"channel":"chat","data":1}`)
	n.call(t, "publish", `{"channel":"chat","data":2}`)
	epoch := epochOf(t, n, "chat")
	n.expect(t, "history_remove", `{"channel":"chat"}`, `{"result":{}}`)
	// The publications are gone; the position stays.
	n.expect(t, "history", `{"channel":"chat","limit":-1}`, `{"result":{"publications":[],"epoch":"`+epoch+`","offset":2}}`)
	n.expect(t, "publish", `{"channel":"chat","data":3}`, `{"result":{"offset":3,"epoch":"`+epoch+`"}}`)

	if got := n.expectError(t, "history_remove", `{"channel":"plain:chat"}`, 108); got != `not available: history is off in the namespace of channel "plain:chat"` {
		t.Errorf("plain: %q", got)
	}
	n.expectError(t, "history_remove", `{"channel":""}`, 107)
	n.expectError(t, "history_remove", `{"channel":"nope:x"}`, 102)
}

// TestHistoryBinary checks that a publication that is not JSON (sent with
// b64data to a binary namespace) is written as a base64 string instead of
// failing the answer.
func TestHistoryBinary(t *testing.T) {
	n := startNode(t, api.Config{})
	n.call(t, "publish", `{"channel":"bin:x","b64data":"AAEC"}`)
	epoch := epochOf(t, n, "bin:x")
	n.expect(t, "history", `{"channel":"bin:x","limit":1}`, `{"result":{"publications":[{"data":"AAEC","offset":1}],"epoch":"`+epoch+`","offset":1}}`)
}
