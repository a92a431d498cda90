package hub_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/protocol"
)

// pbClient is a raw protocol client on the centrifuge-protobuf
// encoding. It frames and parses messages itself (varint length prefixes,
// vtprotobuf marshalling), independently of the hub's codec.
type pbClient struct {
	t   *testing.T
	w   jsonclient.Wire
	buf []*protocol.Reply
}

func (n *node) dialProtobuf(t *testing.T) *pbClient {
	t.Helper()
	return &pbClient{t: t, w: n.dialWire(t, protocol.TypeProtobuf)}
}

// send writes cmds as one frame of length-prefixed messages.
func (c *pbClient) Send(cmds ...*protocol.Command) {
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
	c.SendRaw(frame)
}

func (c *pbClient) SendRaw(frame []byte) {
	c.t.Helper()
	if err := c.w.Write(frame); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// readRaw returns the next frame as received, failing the test after 5 s.
func (c *pbClient) ReadRaw() []byte {
	c.t.Helper()
	data, err := c.w.Read(5 * time.Second)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return data
}

// readFrame reads one frame and parses its replies.
func (c *pbClient) ReadFrame() []*protocol.Reply {
	c.t.Helper()
	data := c.ReadRaw()
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

func (c *pbClient) Next() *protocol.Reply {
	c.t.Helper()
	for len(c.buf) == 0 {
		c.buf = c.ReadFrame()
	}
	r := c.buf[0]
	c.buf = c.buf[1:]
	return r
}

// reply returns the reply with id; earlier messages stay queued for next.
func (c *pbClient) Reply(id uint32) *protocol.Reply {
	c.t.Helper()
	for i := 0; ; i++ {
		for ; i < len(c.buf); i++ {
			if c.buf[i].Id == id {
				r := c.buf[i]
				c.buf = append(c.buf[:i:i], c.buf[i+1:]...)
				return r
			}
		}
		c.buf = append(c.buf, c.ReadFrame()...)
		i--
	}
}

func (c *pbClient) Call(cmd *protocol.Command) *protocol.Reply {
	c.t.Helper()
	c.Send(cmd)
	return c.Reply(cmd.Id)
}

func (c *pbClient) ExpectClose(code int, reason string) {
	c.t.Helper()
	jsonclient.ExpectClose(c.t, c.w, code, reason)
}
