package hub_test

import (
	"testing"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/internal/test/jsonclient"
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
	n.hub.LengthenWriteHolds() // what a loaded machine runs past 10 ms still shares the frame
	js := n.dial(t)
	js.Connect("json")
	js.MustSubscribe(2, "e2e", "")

	pb := n.dialProtobuf(t)
	pb.Send(
		&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{Token: token(t, auth.ConnectClaims{User: "proto"})}},
		&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "e2e"}},
	)
	if replies := pb.ReadFrame(); len(replies) != 2 || replies[0].Connect == nil || replies[1].Subscribe == nil {
		t.Fatalf("connect and subscribe replies in one frame: %v", replies)
	}

	js.Call(`{"id":3,"publish":{"channel":"e2e","data":{"a":1}}}`)
	if r := pb.Next(); string(r.Push.GetPub().GetData()) != `{"a":1}` || r.Push.Pub.Info.GetUser() != "json" {
		t.Fatalf("protobuf subscriber: %v", r)
	}
	if p := jsonclient.PushesOf(js.Drain(), "e2e", "pub"); len(p) != 1 {
		t.Fatalf("json publisher's own publication: %v", p)
	}

	js.Send(`{"id":4,"foo":{}}`)
	js.ExpectClose(3501, "bad request")
	if err := n.hub.DisconnectUser(t.Context(), "proto", "", nil, 4001, "kicked"); err != nil {
		t.Fatal(err)
	}
	pb.ExpectClose(4001, "kicked")
}
