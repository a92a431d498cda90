package api_test

import (
	"encoding/json"
	"testing"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/auth"
)

func TestPresence(t *testing.T) {
	n := startNode(t, api.Config{})
	n.expect(t, "presence", `{"channel":"chat"}`, `{"result":{"presence":{}}}`)
	n.expect(t, "presence_stats", `{"channel":"chat"}`, `{"result":{"num_clients":0,"num_users":0}}`)

	a1 := n.dialWith(t, auth.ConnectClaims{User: "alice", Info: json.RawMessage(`{"name":"Alice"}`)})
	a1.subscribe("chat")
	a2 := n.dial(t, "alice")
	a2.subscribe("chat")
	b := n.dial(t, "bob")
	b.subscribe("chat")

	got := n.call(t, "presence", `{"channel":"chat"}`)
	var res struct {
		Result struct {
			Presence map[string]json.RawMessage `json:"presence"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		a1.id: `{"user":"alice","client":"` + a1.id + `","conn_info":{"name":"Alice"}}`,
		a2.id: `{"user":"alice","client":"` + a2.id + `"}`,
		b.id:  `{"user":"bob","client":"` + b.id + `"}`,
	}
	if len(res.Result.Presence) != len(want) {
		t.Fatalf("presence %s, want %d entries", got, len(want))
	}
	for id, w := range want {
		if string(res.Result.Presence[id]) != w {
			t.Errorf("presence[%s] = %s, want %s", id, res.Result.Presence[id], w)
		}
	}
	n.expect(t, "presence_stats", `{"channel":"chat"}`, `{"result":{"num_clients":3,"num_users":2}}`)
}

func TestPresenceErrors(t *testing.T) {
	n := startNode(t, api.Config{})
	for _, method := range []string{"presence", "presence_stats"} {
		if got := n.expectError(t, method, `{"channel":"plain:chat"}`, 108); got != `not available: presence is off in the namespace of channel "plain:chat"` {
			t.Errorf("%s plain: %q", method, got)
		}
		if got := n.expectError(t, method, `{}`, 107); got != "channel required" {
			t.Errorf("%s empty: %q", method, got)
		}
		n.expectError(t, method, `{"channel":"nope:chat"}`, 102)
	}
}
