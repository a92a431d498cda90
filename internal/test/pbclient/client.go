// Package pbclient is the Centrifugo Protobuf protocol client that
// Herald's tests share: it frames commands and parses replies itself
// (varint length prefixes, vtprotobuf marshalling), independently of the
// codec of the server under test, matches replies to commands by id and
// checks close codes. It speaks on a wire.Wire, to a hub in memory or to
// a server over a real WebSocket, like the JSON client (jsonclient).
//
// It is for tests only: every Client method fails the test it was made
// for instead of returning an error.
package pbclient

import (
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/internal/test/testtoken"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// readTimeout bounds every wait for a frame: a reply or push that does
// not come fails the test instead of hanging it.
const readTimeout = 5 * time.Second

// Client is a raw Protobuf protocol client: it sends the commands it is
// given and returns the replies and pushes as the server wrote them.
type Client struct {
	t testing.TB
	w wire.Wire
	// secret signs the connection tokens of Connect (HMAC, HS256).
	secret string
	// buf holds replies read but not consumed yet by Next and Reply.
	buf []*protocol.Reply
}

// New returns a client on w, which must carry Protobuf frames, for t.
// secret is the HMAC key of the tokens Connect mints (empty if the test
// sends its own connect command).
func New(t testing.TB, w wire.Wire, secret string) *Client {
	return &Client{t: t, w: w, secret: secret}
}

// Wire returns the connection the client speaks on.
func (c *Client) Wire() wire.Wire { return c.w }

// Send writes cmds as one frame of length-prefixed messages.
func (c *Client) Send(cmds ...*protocol.Command) {
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

// SendRaw writes one frame as given, well-formed or not.
func (c *Client) SendRaw(frame []byte) {
	c.t.Helper()
	if err := c.w.Write(frame); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// ReadRaw returns the next frame as received, failing the test after 5 s.
func (c *Client) ReadRaw() []byte {
	c.t.Helper()
	data, err := c.w.Read(readTimeout)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return data
}

// ReadFrame reads one frame and parses its replies.
func (c *Client) ReadFrame() []*protocol.Reply {
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

// Next returns the next reply or push, whatever frame it came in.
func (c *Client) Next() *protocol.Reply {
	c.t.Helper()
	for len(c.buf) == 0 {
		c.buf = c.ReadFrame()
	}
	r := c.buf[0]
	c.buf = c.buf[1:]
	return r
}

// Reply returns the reply with id; messages that came before it stay
// queued for Next, in order.
func (c *Client) Reply(id uint32) *protocol.Reply {
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

// Call sends cmd, which must carry an id, and returns its reply.
func (c *Client) Call(cmd *protocol.Command) *protocol.Reply {
	c.t.Helper()
	if cmd.Id == 0 {
		c.t.Fatalf("Call needs a command with an id: %v", cmd)
	}
	c.Send(cmd)
	return c.Reply(cmd.Id)
}

// Connect sends a connect command (id 1) with a token for user signed
// with the client's secret, and returns the connect result.
func (c *Client) Connect(user string) *protocol.ConnectResult {
	c.t.Helper()
	tok := testtoken.Connect(c.t, c.secret, auth.ConnectClaims{User: user})
	r := c.Call(&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{Token: tok}})
	if r.Connect == nil {
		c.t.Fatalf("connect %s: %v", user, r)
	}
	return r.Connect
}

// ExpectClose reads until the server closes the connection, skipping the
// messages queued before the close, and checks code and reason ("" for
// any reason).
func (c *Client) ExpectClose(code int, reason string) {
	c.t.Helper()
	wire.ExpectClose(c.t, c.w, code, reason)
}

// Drop makes the client go away without a close handshake.
func (c *Client) Drop() { c.w.Drop() }
