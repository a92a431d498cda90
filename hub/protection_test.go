package hub_test

import (
	"fmt"
	"testing"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

func TestNodeConnectionLimit(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Client: hub.ClientConfig{ConnectionLimit: 2}})
	n.dial(t).Connect("a")
	n.dial(t).Connect("b")
	c := n.dial(t)
	c.Send(`{"id":1,"connect":{"token":"` + token(t, auth.ConnectClaims{User: "c"}) + `"}}`)
	c.ExpectClose(3504, "connection limit")
}

func TestUserConnectionLimit(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Client: hub.ClientConfig{UserConnectionLimit: 2, AllowAnonymousConnectWithoutToken: true}})
	n.dial(t).Connect("alice")
	n.dial(t).Connect("alice")
	c := n.dial(t)
	c.Send(`{"id":1,"connect":{"token":"` + token(t, auth.ConnectClaims{User: "alice"}) + `"}}`)
	c.ExpectClose(3504, "connection limit")
	// Other users, and anonymous clients, are not limited by alice's count.
	n.dial(t).Connect("bob")
	for i := 0; i < 3; i++ {
		a := n.dial(t)
		a.Send(`{"id":1,"connect":{}}`)
		if m := a.ReadOne(); m["connect"] == nil {
			t.Fatalf("anonymous connect %d: %v", i, m)
		}
	}
}

// TestCommandRateLimit sends a burst over the limit in one frame: the
// commands over it get error 111 (temporary), and a client that keeps going
// is closed with 3013.
func TestCommandRateLimit(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{
		Client:   hub.ClientConfig{CommandRateLimit: 1, CommandRateBurst: 3},
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true}},
	})
	c := n.dial(t)
	c.Connect("u") // takes one token of the burst
	frame := ""
	for i := 2; i <= 5; i++ {
		if frame != "" {
			frame += "\n"
		}
		frame += fmt.Sprintf(`{"id":%d,"subscribe":{"channel":"c%d"}}`, i, i)
	}
	c.Send(frame)
	msgs := c.ReadMsgs(4)
	ok, limited := 0, 0
	for _, m := range msgs {
		switch {
		case m["subscribe"] != nil:
			ok++
		case jsonclient.ErrorCode(m) == 111:
			limited++
			if e := m["error"].(map[string]any); e["temporary"] != true || e["message"] != "too many requests" {
				t.Errorf("111 must be temporary with the reference message: %v", e)
			}
		default:
			t.Errorf("unexpected reply %v", m)
		}
	}
	if ok != 2 || limited != 2 {
		t.Fatalf("want 2 subscribed and 2 limited, got %d and %d: %v", ok, limited, msgs)
	}
	// Two more refused in a row makes four: over the burst of 3 → 3013.
	c.Send(`{"id":10,"presence":{"channel":"x"}}` + "\n" + `{"id":11,"presence":{"channel":"x"}}`)
	c.ExpectClose(3013, "too many requests")
	// The server keeps serving everyone else.
	n.dial(t).Connect("other")
}
