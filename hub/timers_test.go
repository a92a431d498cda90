package hub_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/protocol"
)

func pingConfig() hub.Config {
	return hub.Config{Client: hub.ClientConfig{
		PingInterval: time.Second,
		PongTimeout:  500 * time.Millisecond, // shorter than the interval, as Validate requires
	}}
}

// TestPingPong answers three pings: the connection stays open for more
// than two ping intervals, longer than the pong timeout.
func TestPingPong(t *testing.T) {
	t.Parallel()
	n := startNode(t, pingConfig())
	t.Run("json", func(t *testing.T) {
		t.Parallel()
		c := n.dial(t)
		if res := c.Connect("u"); jsonclient.Num(res["ping"]) != 1 || res["pong"] != true {
			t.Fatalf("connect result: %v", res)
		}
		start := time.Now()
		for range 3 {
			if f := c.Read(); f != `{}` {
				t.Fatalf("want ping {}, got %s", f)
			}
			c.Send(`{}`)
		}
		if el := time.Since(start); el < 2*time.Second {
			t.Fatalf("three pings in %v with a 1s interval", el)
		}
		if m := c.Call(`{"id":2,"rpc":{}}`); jsonclient.ErrorCode(m) != 108 {
			t.Fatalf("after pings: %v", m)
		}
	})
	t.Run("protobuf", func(t *testing.T) {
		t.Parallel()
		c := n.dialProtobuf(t)
		if res := c.Connect("u"); res.Ping != 1 || !res.Pong {
			t.Fatalf("connect result: %v", res)
		}
		for range 3 {
			// Over WebSocket the wire checks that it is a binary frame.
			if data := c.ReadRaw(); string(data) != "\x00" {
				t.Fatalf("want ping 0x00, got %x", data)
			}
			c.SendRaw([]byte{0})
		}
		if r := c.Call(&protocol.Command{Id: 2, Rpc: &protocol.RPCRequest{}}); r.Error.GetCode() != 108 {
			t.Fatalf("after pings: %v", r)
		}
	})
}

func TestNoPong(t *testing.T) {
	t.Parallel()
	n := startNode(t, pingConfig())
	c := n.dial(t)
	c.Connect("u")
	if f := c.Read(); f != `{}` {
		t.Fatalf("want ping, got %s", f)
	}
	c.ExpectClose(3012, "no pong")
}

func TestUnexpectedPong(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Channels: openChannels()})
	for _, cmd := range []string{
		`{}`,
		// Any command without id but send is a pong.
		`{"subscribe":{"channel":"a"}}`,
		`{"id":0,"rpc":{}}`,
	} {
		c := n.dial(t)
		c.Connect("u")
		c.Send(cmd)
		c.ExpectClose(3501, "bad request")
	}
}

func TestStale(t *testing.T) {
	t.Parallel()
	n := startNode(t, hub.Config{Client: hub.ClientConfig{StaleCloseDelay: 300 * time.Millisecond}})
	c := n.dial(t)
	start := time.Now()
	c.ExpectClose(3502, "stale")
	if el := time.Since(start); el < 250*time.Millisecond {
		t.Fatalf("closed after %v, before the stale delay", el)
	}
	// A connected client is not stale.
	ok := n.dial(t)
	ok.Connect("u")
	c = n.dial(t)
	c.ExpectClose(3502, "stale")
	if m := ok.Call(`{"id":2,"rpc":{}}`); jsonclient.ErrorCode(m) != 108 {
		t.Fatalf("connected client after the stale delay: %v", m)
	}
}
