package hub_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/transport/websocket"
)

// badInputCase is one kind of malformed input and the close it earns.
type badInputCase struct {
	name     string
	connect  bool
	protobuf bool
	frame    string
	code     int
}

// TestBadInput sends each kind of malformed input on its own connection
// and checks the close code; after each, a client that was connected all
// along and a new one are still served.
func TestBadInput(t *testing.T) {
	t.Parallel()
	runBadInput(t, startNode(t, hub.Config{Channels: openChannels()}), []badInputCase{
		{"malformed json", false, false, `{"id":1,"connect":`, 3501},
		{"json not an object", false, false, `[1,2]`, 3501},
		{"malformed json after connect", true, false, `{"id":2,"subscribe":{"channel":}}`, 3501},
		{"bad line in a batch", true, false, `{"id":2,"rpc":{}}` + "\n" + `nonsense`, 3501},
		{"unknown command", true, false, `{"id":2,"foo":{}}`, 3501},
		{"no method", true, false, `{"id":2}`, 3501},
		{"ping command", true, false, `{"id":2,"ping":{}}`, 3501},
		{"empty frame", true, false, ``, 3501},
		{"protobuf garbage", false, true, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 3501},
		{"protobuf length past the end", false, true, "\x05\x08", 3501},
		{"protobuf bad message", false, true, "\x02\x0a\xff", 3501},
		{"protobuf empty frame", false, true, "", 3501},
	})
}

// TestBadInputOversizeFrame: the WebSocket transport refuses a frame over
// its read limit with 1009, and the hub keeps serving.
func TestBadInputOversizeFrame(t *testing.T) {
	t.Parallel()
	n := startNodeWS(t, hub.Config{Channels: openChannels()}, websocket.Config{MaxMessageSize: websocket.DefaultMaxMessageSize})
	runBadInput(t, n, []badInputCase{
		{"oversize frame", true, false, `{"id":2,"rpc":{"data":"` + strings.Repeat("x", 64<<10) + `"}}`, 1009},
	})
}

// runBadInput sends each case's frame on its own connection to n and
// checks the close; after each, a client that was connected all along and
// a new one are still served.
func runBadInput(t *testing.T, n *node, cases []badInputCase) {
	witness := n.dial(t)
	witness.Connect("witness")
	witness.MustSubscribe(2, "w", "")

	stillServing := func(t *testing.T, round int) {
		t.Helper()
		c := n.dial(t)
		c.Connect("fresh")
		c.MustSubscribe(2, "w", "")
		data := `{"round":` + strconv.Itoa(round) + `}`
		c.Call(`{"id":3,"publish":{"channel":"w","data":` + data + `}}`)
		for _, cl := range []*rawClient{c, witness} {
			p := jsonclient.PushesOf(cl.Drain(), "w", "pub")
			if len(p) != 1 || jsonclient.Compact(t, p[0]["data"]) != data {
				t.Fatalf("publication after bad input: %v", p)
			}
		}
	}

	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w wire.Wire
			if tc.protobuf {
				w = n.dialProtobuf(t).Wire()
			} else {
				c := n.dial(t)
				if tc.connect {
					c.Connect("u")
				}
				w = c.Wire()
			}
			if err := w.Write([]byte(tc.frame)); err != nil {
				t.Fatal(err)
			}
			reason := ""
			if tc.code == 3501 {
				reason = "bad request"
			}
			wire.ExpectClose(t, w, tc.code, reason)
			stillServing(t, i)
		})
	}
}
