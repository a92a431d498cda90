package hub_test

import (
	"context"
	"errors"
	"testing"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

func TestRPCWithoutHandler(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{})
	c := n.dial(t)
	c.Connect("u")
	jsonclient.WantError(t, c.Call(`{"id":2,"rpc":{"method":"m","data":{}}}`), 108)
}

func TestRPCHandler(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Handlers: hub.Handlers{OnRPC: func(ctx context.Context, c *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
		switch ev.Method {
		case "echo":
			reply(hub.RPCReply{Data: []byte(`{"user":"` + c.User() + `","got":` + string(ev.Data) + `}`)}, nil)
		case "empty":
			reply(hub.RPCReply{}, nil)
		case "refuse":
			reply(hub.RPCReply{}, &hub.Error{Code: 1000, Message: "nope", Temporary: true})
		case "close":
			// Answered later, from another goroutine.
			go reply(hub.RPCReply{}, &hub.Disconnect{Code: 4000, Reason: "bye"})
		default:
			reply(hub.RPCReply{}, errors.New("boom"))
		}
	}}})
	c := n.dial(t)
	c.Connect("u")
	if m := c.Call(`{"id":2,"rpc":{"method":"echo","data":{"x": 1}}}`); jsonclient.Compact(t, m["rpc"]) != `{"data":{"got":{"x":1},"user":"u"}}` {
		t.Fatalf("echo: %v", m)
	}
	if m := c.Call(`{"id":3,"rpc":{"method":"empty"}}`); jsonclient.Compact(t, m["rpc"]) != `{}` {
		t.Fatalf("empty result: %v", m)
	}
	m := c.Call(`{"id":4,"rpc":{"method":"refuse"}}`)
	if jsonclient.Compact(t, m["error"]) != `{"code":1000,"message":"nope","temporary":true}` {
		t.Fatalf("application error: %v", m)
	}
	m = c.Call(`{"id":5,"rpc":{"method":"other"}}`)
	jsonclient.WantError(t, m, 100)
	c.Send(`{"id":6,"rpc":{"method":"close"}}`)
	c.ExpectClose(4000, "bye")
}

func TestSendWithoutHandler(t *testing.T) {
	t.Parallel()
	disconnects := make(chan uint32, 1)
	n := startNode(t, hub.Config{Handlers: hub.Handlers{OnDisconnect: func(c *hub.Client, ev hub.DisconnectEvent) {
		disconnects <- ev.Code
	}}})
	c := n.dial(t)
	c.Connect("u")
	c.Send(`{"send":{"data":{"x":1}}}`)
	c.ExpectClose(3508, "not available")
	if code := recv(t, disconnects, "OnDisconnect"); code != 3508 {
		t.Fatalf("OnDisconnect code %d", code)
	}
}

func TestSendHandler(t *testing.T) {
	t.Parallel()
	got := make(chan string, 2)
	n := startNode(t, hub.Config{Handlers: hub.Handlers{OnSend: func(ctx context.Context, c *hub.Client, ev hub.SendEvent) error {
		data := ev.Data
		got <- string(data)
		// Answer with an asynchronous message push.
		if err := c.Send([]byte(`{"echo":` + string(data) + `}`)); err != nil {
			t.Errorf("Send: %v", err)
		}
		return nil
	}}})
	c := n.dial(t)
	c.Connect("u")
	c.Send(`{"send":{"data":{"x": 1}}}`)
	if d := recv(t, got, "OnSend"); d != `{"x": 1}` {
		t.Fatalf("OnMessage data %q", d)
	}
	if m := c.Next(); jsonclient.Compact(t, m) != `{"push":{"message":{"data":{"echo":{"x":1}}}}}` {
		t.Fatalf("message push: %v", m)
	}
	// A send with an id has no reply either.
	c.Send(`{"id":7,"send":{"data":[2]}}`)
	if d := recv(t, got, "OnSend"); d != `[2]` {
		t.Fatalf("OnMessage data %q", d)
	}
	c.Next() // the echo
	if msgs := c.Drain(); len(msgs) != 0 {
		t.Fatalf("send must not be answered: %v", msgs)
	}
}
