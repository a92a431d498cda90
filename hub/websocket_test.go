package hub_test

import (
	"testing"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/websocket"
)

// TestWebSocketEndToEnd runs a short exchange over the real WebSocket
// transport whatever startNode uses: JSON in text frames, Protobuf in
// binary frames (the wire checks the frame types) with one frame's
// replies in one frame, a publication across the two encodings, and the
// hub's closes as close frames. The rest of the suite runs in memory
// unless HERALD_TEST_HUB_TRANSPORT=websocket.
func TestWebSocketEndToEnd(t *testing.T) {
	t.Parallel()
	n := startNodeWS(t, protobufConfig(), websocket.Config{})
	js := n.dial(t)
	js.connect("json")
	js.mustSubscribe(2, "e2e", "")

	pb := n.dialProtobuf(t)
	pb.send(
		&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{Token: token(t, auth.ConnectClaims{User: "proto"})}},
		&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "e2e"}},
	)
	if replies := pb.readFrame(); len(replies) != 2 || replies[0].Connect == nil || replies[1].Subscribe == nil {
		t.Fatalf("connect and subscribe replies in one frame: %v", replies)
	}

	js.call(`{"id":3,"publish":{"channel":"e2e","data":{"a":1}}}`)
	if r := pb.next(); string(r.Push.GetPub().GetData()) != `{"a":1}` || r.Push.Pub.Info.GetUser() != "json" {
		t.Fatalf("protobuf subscriber: %v", r)
	}
	if p := pushesOf(js.drain(), "e2e", "pub"); len(p) != 1 {
		t.Fatalf("json publisher's own publication: %v", p)
	}

	js.send(`{"id":4,"foo":{}}`)
	js.expectClose(3501, "bad request")
	if err := n.hub.DisconnectUser(t.Context(), "proto", "", nil, 4001, "kicked"); err != nil {
		t.Fatal(err)
	}
	pb.expectClose(4001, "kicked")
}
