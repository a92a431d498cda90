package proxy_test

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/jsonclient"
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
	send := func(cmd *protocol.Command) *protocol.Reply {
		t.Helper()
		msg, err := protocol.AppendCommand(protocol.TypeProtobuf, nil, cmd)
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Send(protocol.AppendMessage(protocol.TypeProtobuf, nil, msg)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for {
			out, err := conn.Next(ctx)
			if err != nil {
				t.Fatalf("no reply: %v", err)
			}
			replies, err := protocol.DecodeReplies(protocol.TypeProtobuf, out)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range replies {
				if r.Id == cmd.Id {
					return r
				}
			}
		}
	}
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
