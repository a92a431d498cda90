package hub_test

import (
	"strconv"
	"strings"
	"testing"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/hub"
)

// TestBadInput sends each kind of malformed input on its own connection
// and checks the close code; after each, a client that was connected all
// along and a new one are still served.
func TestBadInput(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: openChannels()})
	witness := n.dial(t)
	witness.connect("witness")
	witness.mustSubscribe(2, "w", "")

	stillServing := func(t *testing.T, round int) {
		t.Helper()
		c := n.dial(t)
		c.connect("fresh")
		c.mustSubscribe(2, "w", "")
		data := `{"round":` + strconv.Itoa(round) + `}`
		c.call(`{"id":3,"publish":{"channel":"w","data":` + data + `}}`)
		for _, cl := range []*wsClient{c, witness} {
			p := pushesOf(cl.drain(), "w", "pub")
			if len(p) != 1 || compact(t, p[0]["data"]) != data {
				t.Fatalf("publication after bad input: %v", p)
			}
		}
	}

	for i, tc := range []struct {
		name      string
		connect   bool
		protobuf  bool
		frameType int
		frame     string
		code      int
	}{
		{"malformed json", false, false, gws.TextMessage, `{"id":1,"connect":`, 3501},
		{"json not an object", false, false, gws.TextMessage, `[1,2]`, 3501},
		{"malformed json after connect", true, false, gws.TextMessage, `{"id":2,"subscribe":{"channel":}}`, 3501},
		{"bad line in a batch", true, false, gws.TextMessage, `{"id":2,"rpc":{}}` + "\n" + `nonsense`, 3501},
		{"unknown command", true, false, gws.TextMessage, `{"id":2,"foo":{}}`, 3501},
		{"no method", true, false, gws.TextMessage, `{"id":2}`, 3501},
		{"ping command", true, false, gws.TextMessage, `{"id":2,"ping":{}}`, 3501},
		{"empty frame", true, false, gws.TextMessage, ``, 3501},
		{"oversize frame", true, false, gws.TextMessage, `{"id":2,"rpc":{"data":"` + strings.Repeat("x", 64<<10) + `"}}`, 1009},
		{"protobuf garbage", false, true, gws.BinaryMessage, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 3501},
		{"protobuf length past the end", false, true, gws.BinaryMessage, "\x05\x08", 3501},
		{"protobuf bad message", false, true, gws.BinaryMessage, "\x02\x0a\xff", 3501},
		{"protobuf empty frame", false, true, gws.BinaryMessage, "", 3501},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var conn *gws.Conn
			if tc.protobuf {
				conn = n.dialProtobuf(t).conn
			} else {
				c := n.dial(t)
				if tc.connect {
					c.connect("u")
				}
				conn = c.conn
			}
			if err := conn.WriteMessage(tc.frameType, []byte(tc.frame)); err != nil {
				t.Fatal(err)
			}
			reason := ""
			if tc.code == 3501 {
				reason = "bad request"
			}
			expectCloseConn(t, conn, tc.code, reason)
			stillServing(t, i)
		})
	}
}
