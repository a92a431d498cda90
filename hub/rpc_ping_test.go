package hub_test

import (
	"context"
	"testing"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// TestRPCPing: the built-in ping method answers with an empty result
// before any other handler; other methods go on down the chain.
func TestRPCPing(t *testing.T) {
	t.Parallel()
	app := hub.Handlers{OnRPC: func(_ context.Context, _ *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
		reply(hub.RPCReply{Data: []byte(`{"method":"` + ev.Method + `"}`)}, nil)
	}}
	cfg := hub.Config{Handlers: hub.Chain(hub.RPCPing("ping"), app)}
	n := startNode(t, cfg)
	c := n.dial(t)
	c.Connect("alice")
	if m := c.Call(`{"id":2,"rpc":{"method":"ping"}}`); m["error"] != nil || jsonclient.Compact(t, m["rpc"]) != `{}` {
		t.Fatalf("ping: want an empty result, got %v", m)
	}
	if m := c.Call(`{"id":3,"rpc":{"method":"other"}}`); jsonclient.Path(m, "rpc", "data", "method") != "other" {
		t.Fatalf("another method: want the next handler's answer, got %v", m)
	}
}

// TestConnectIncludeServerTime: client.connect_include_server_time puts
// the server's Unix milliseconds in the connect result; without it the
// field is absent.
func TestConnectIncludeServerTime(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		n := startNode(t, hub.Config{Client: hub.ClientConfig{ConnectIncludeServerTime: on}})
		c := n.dial(t)
		res := c.Connect("alice")
		ms, ok := res["time"].(float64)
		if ok != on || (on && ms < 1.7e12) {
			t.Errorf("connect_include_server_time %v: time %v", on, res["time"])
		}
	}
}
