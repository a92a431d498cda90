package proxy_test

import (
	"net/http"
	"testing"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// TestUnidirectionalConnect: a unidirectional client (which sends one
// connect request when it opens the connection) is authenticated through
// the connect proxy too, with its transport's name and headers; a refusal
// closes it, since it cannot retry on the connection.
func TestUnidirectionalConnect(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	cfg := fullConfig(b, nil)
	cfg.Endpoints[0].HTTPHeaders = []string{"Cookie"}
	n := startNode(t, cfg)
	open := func() (*hubtest.Conn, *hub.Client) {
		conn := hubtest.NewConn(protocol.TypeJSON)
		c := n.hub.Open(conn, hub.ConnInfo{RemoteAddr: "test", Transport: hub.TransportUniSSE, Unidirectional: true, Header: http.Header{"Cookie": {"sid=u"}}})
		conn.Attach(c)
		t.Cleanup(conn.Drop)
		return conn, c
	}
	conn, c := open()
	b.answer("/connect", `{"result":{"user":"uni","data":{"hello":"uni"}}}`)
	c.Connect(&protocol.ConnectRequest{Data: []byte(`{"from":"url"}`)})
	req := b.next()
	if req.body["transport"] != "uni_sse" || req.header.Get("Cookie") != "sid=u" || jsonclient.Compact(t, req.body["data"]) != `{"from":"url"}` {
		t.Fatalf("unidirectional connect request: %v %v", req.body, req.header)
	}
	cl := jsonclient.New(t, wire.Mem(conn), testSecret)
	if m := cl.Reply(1); jsonclient.Compact(t, m["connect"].(map[string]any)["data"]) != `{"hello":"uni"}` || c.User() != "uni" {
		t.Fatalf("unidirectional connect: %v", m)
	}

	conn2, c2 := open()
	b.answer("/connect", `{"error":{"code":1000,"message":"no"}}`)
	c2.Connect(&protocol.ConnectRequest{})
	b.next()
	jsonclient.New(t, wire.Mem(conn2), testSecret).ExpectClose(3004, "")
}
