package api_test

import (
	"testing"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// dialSession connects user over an in-memory connection that has the
// emulation session session, as an HTTP-streaming or SSE client has.
func (n *node) dialSession(t *testing.T, user, session string) *jsonclient.Client {
	t.Helper()
	conn := hubtest.NewConn(protocol.TypeJSON)
	conn.Attach(n.hub.Open(conn, hub.ConnInfo{RemoteAddr: "test", Transport: hub.TransportHTTPStream, Session: session}))
	t.Cleanup(conn.Drop)
	c := jsonclient.New(t, wire.Mem(conn), testSecret)
	c.Connect(user)
	return c
}

// TestSessionTargets: subscribe, unsubscribe, disconnect and refresh with session
// act on the connection with that session only; a session nobody has
// acts on nobody.
func TestSessionTargets(t *testing.T) {
	n := startNode(t, api.Config{})
	ws := n.dial(t, "alice")
	ws.subscribe("chat")
	s1 := n.dialSession(t, "alice", "sess-1")

	n.expect(t, "subscribe", `{"user":"alice","channel":"chat","session":"sess-1"}`, `{"result":{}}`)
	if m := s1.Next(); jsonclient.Path(m, "push", "subscribe") == nil {
		t.Fatalf("sess-1: want the subscribe push, got %v", m)
	}
	n.expect(t, "unsubscribe", `{"user":"alice","channel":"chat","session":"sess-1"}`, `{"result":{}}`)
	if m := s1.Next(); jsonclient.Path(m, "push", "unsubscribe") == nil {
		t.Fatalf("sess-1: want the unsubscribe push, got %v", m)
	}
	n.expect(t, "refresh", `{"user":"alice","session":"other","expired":true}`, `{"result":{}}`)
	n.expect(t, "disconnect", `{"user":"alice","session":"other"}`, `{"result":{}}`)
	n.expect(t, "disconnect", `{"user":"alice","session":"sess-1","disconnect":{"code":4010,"reason":"by session"}}`, `{"result":{}}`)
	s1.ExpectClose(4010, "by session")

	// The WebSocket connection, which has no session, kept its
	// subscription and is open.
	n.call(t, "publish", `{"channel":"chat","data":1}`)
	if m := ws.ReadOne(); jsonclient.Path(m, "push", "pub") == nil {
		t.Fatalf("ws: want the publication, got %v", m)
	}
	ws.expectOpen()

	// refresh with expired closes the session's connection only.
	s2 := n.dialSession(t, "alice", "sess-2")
	n.expect(t, "refresh", `{"user":"alice","session":"sess-2","expired":true}`, `{"result":{}}`)
	s2.ExpectClose(3005, "connection expired")
	ws.expectOpen()
}

// TestSubscribeOverride: override replaces the namespace's options for the
// one subscription: force_recovery makes a server-side subscription
// recoverable and positioned, which it is not by default.
func TestSubscribeOverride(t *testing.T) {
	n := startNode(t, api.Config{})
	c := n.dial(t, "alice")
	n.expect(t, "subscribe", `{"user":"alice","channel":"plain-default"}`, `{"result":{}}`)
	if m := c.ReadOne(); jsonclient.Path(m, "push", "subscribe", "recoverable") != nil {
		t.Fatalf("without override: %v", m)
	}
	n.expect(t, "subscribe", `{"user":"alice","channel":"forced","override":{"force_recovery":{"value":true}}}`, `{"result":{}}`)
	m := c.ReadOne()
	if jsonclient.Path(m, "push", "subscribe", "recoverable") != true || jsonclient.Path(m, "push", "subscribe", "positioned") != true {
		t.Fatalf("with force_recovery: %v", m)
	}
	c.expectOpen()
}
