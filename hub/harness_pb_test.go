package hub_test

import (
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/transport/websocket"
)

// pbClient is a raw protocol client on the centrifuge-protobuf
// subprotocol. It frames and parses messages itself (varint length
// prefixes, vtprotobuf marshalling), independently of the hub's codec.
type pbClient struct {
	t    *testing.T
	conn *gws.Conn
	buf  []*protocol.Reply
}

func (n *node) dialProtobuf(t *testing.T) *pbClient {
	t.Helper()
	d := &gws.Dialer{HandshakeTimeout: 5 * time.Second, Subprotocols: []string{websocket.SubprotocolProtobuf}}
	c := n.dialDialer(t, d, nil)
	if got := c.conn.Subprotocol(); got != websocket.SubprotocolProtobuf {
		t.Fatalf("subprotocol echoed: %q", got)
	}
	return &pbClient{t: t, conn: c.conn}
}

// send writes cmds as one binary frame of length-prefixed messages.
func (c *pbClient) send(cmds ...*protocol.Command) {
	c.t.Helper()
	var frame []byte
	for _, cmd := range cmds {
		b, err := cmd.MarshalVT()
		if err != nil {
			c.t.Fatal(err)
		}
		frame = protowire.AppendVarint(frame, uint64(len(b)))
		frame = append(frame, b...)
	}
	c.sendRaw(frame)
}

func (c *pbClient) sendRaw(frame []byte) {
	c.t.Helper()
	if err := c.conn.WriteMessage(gws.BinaryMessage, frame); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// readFrame reads one binary frame and parses its replies.
func (c *pbClient) readFrame() []*protocol.Reply {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	typ, data, err := c.conn.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	if typ != gws.BinaryMessage {
		c.t.Fatalf("protobuf connection got frame type %d", typ)
	}
	var out []*protocol.Reply
	for len(data) > 0 {
		size, n := protowire.ConsumeVarint(data)
		if n < 0 || uint64(len(data)-n) < size {
			c.t.Fatalf("bad length prefix in frame %x", data)
		}
		r := new(protocol.Reply)
		if err := r.UnmarshalVT(data[n : n+int(size)]); err != nil {
			c.t.Fatalf("unmarshal reply: %v", err)
		}
		out = append(out, r)
		data = data[n+int(size):]
	}
	return out
}

func (c *pbClient) next() *protocol.Reply {
	c.t.Helper()
	for len(c.buf) == 0 {
		c.buf = c.readFrame()
	}
	r := c.buf[0]
	c.buf = c.buf[1:]
	return r
}

// reply returns the reply with id; earlier messages stay queued for next.
func (c *pbClient) reply(id uint32) *protocol.Reply {
	c.t.Helper()
	for i := 0; ; i++ {
		for ; i < len(c.buf); i++ {
			if c.buf[i].Id == id {
				r := c.buf[i]
				c.buf = append(c.buf[:i:i], c.buf[i+1:]...)
				return r
			}
		}
		c.buf = append(c.buf, c.readFrame()...)
		i--
	}
}

func (c *pbClient) call(cmd *protocol.Command) *protocol.Reply {
	c.t.Helper()
	c.send(cmd)
	return c.reply(cmd.Id)
}

func (c *pbClient) expectClose(code int, reason string) {
	c.t.Helper()
	expectCloseConn(c.t, c.conn, code, reason)
}
