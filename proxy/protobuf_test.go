package proxy_test

import (
	"encoding/base64"
	"testing"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/pbclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// TestProtobufClient: a Protobuf client's binary payload, which cannot be
// JSON, goes as b64data with "encoding": "binary" even without
// binary_encoding, and binary results reach it as bytes.
func TestProtobufClient(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	n := startNode(t, fullConfig(b, nil))
	conn := hubtest.NewConn(protocol.TypeProtobuf)
	c := n.hub.Open(conn, hub.ConnInfo{RemoteAddr: "test"})
	conn.Attach(c)
	t.Cleanup(conn.Drop)
	send := pbclient.New(t, wire.Mem(conn), "").Call
	raw := []byte{0x00, 0xff, 0x10}
	b.answer("/connect", `{"result":{"user":"pb","b64data":"`+base64.StdEncoding.EncodeToString([]byte{1, 2, 3})+`"}}`)
	r := send(&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{Data: raw}})
	req := b.next()
	if req.body["protocol"] != "protobuf" || req.body["encoding"] != "binary" || req.body["b64data"] != base64.StdEncoding.EncodeToString(raw) || req.body["data"] != nil {
		t.Fatalf("protobuf connect request: %v", req.body)
	}
	if r.Connect == nil || string(r.Connect.Data) != "\x01\x02\x03" {
		t.Fatalf("protobuf connect reply: %v", r)
	}
	// JSON payloads from a Protobuf client still go as data.
	b.answer("/rpc", `{"result":{"data":{"ok":true}}}`)
	r = send(&protocol.Command{Id: 2, Rpc: &protocol.RPCRequest{Method: "m", Data: []byte(`{"x":1}`)}})
	if req := b.next(); jsonclient.Compact(t, req.body["data"]) != `{"x":1}` || req.body["encoding"] != "json" {
		t.Fatalf("protobuf rpc request: %v", req.body)
	}
	if r.Rpc == nil || string(r.Rpc.Data) != `{"ok":true}` {
		t.Fatalf("protobuf rpc reply: %v", r)
	}
}
