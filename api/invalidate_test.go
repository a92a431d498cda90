package api_test

import (
	"testing"

	"github.com/heraldhq/herald/api"
)

const invalidatedPush = `{"push":{"channel":"chat","unsubscribe":{"code":2502,"reason":"state invalidated"}}}`

// TestInvalidateStateUser: without a channel the user's connections are
// closed with 3014, on which the SDKs drop their token and cached state.
func TestInvalidateStateUser(t *testing.T) {
	n := startNode(t, api.Config{})
	a1, a2, b := n.dial(t, "alice"), n.dial(t, "alice"), n.dial(t, "bob")
	n.expect(t, "invalidate_state", `{"user":"alice"}`, `{"result":{}}`)
	a1.ExpectClose(3014, "state invalidated")
	a2.ExpectClose(3014, "state invalidated")
	b.expectOpen()

	// One connection, through the single endpoint.
	c1, c2 := n.dial(t, "carol"), n.dial(t, "carol")
	if got := n.legacy(t, `{"method":"invalidate_state","params":{"user":"carol","client":"`+c1.id+`"}}`); got != `{"result":{}}` {
		t.Fatalf("POST /api: %s", got)
	}
	c1.ExpectClose(3014, "state invalidated")
	c2.expectOpen()
}

// TestInvalidateStateChannel: with a channel the subscriptions get the
// unsubscribe push 2502: the user's only, or with the channel alone every
// subscriber's; other channels are left alone.
func TestInvalidateStateChannel(t *testing.T) {
	n := startNode(t, api.Config{})
	a, b, c := n.dial(t, "alice"), n.dial(t, "bob"), n.dial(t, "carol")
	for _, cl := range []*wsClient{a, b, c} {
		cl.subscribe("chat")
	}
	n.expect(t, "invalidate_state", `{"user":"alice","channel":"chat"}`, `{"result":{}}`)
	if got := a.Read(); got != invalidatedPush {
		t.Fatalf("alice: %s, want %s", got, invalidatedPush)
	}
	b.expectOpen()

	// In a batch: the channel alone reaches every subscriber left.
	n.expect(t, "batch", `{"commands":[{"invalidate_state":{"channel":"chat"}}]}`, `{"replies":[{"invalidate_state":{}}]}`)
	for _, cl := range []*wsClient{b, c} {
		if got := cl.Read(); got != invalidatedPush {
			t.Fatalf("%s: %s, want %s", cl.id, got, invalidatedPush)
		}
	}
	a.expectOpen()
}

func TestInvalidateStateErrors(t *testing.T) {
	n := startNode(t, api.Config{})
	if got, want := n.expectError(t, "invalidate_state", `{}`, 107), "channel or user required (or client or session, for an anonymous connection)"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
}
