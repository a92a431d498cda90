package pbclient_test

import (
	"log/slog"
	"testing"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/pbclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "pbclient-test-secret"

// newClient starts a hub that lets anyone subscribe and returns a client
// on an in-memory Protobuf connection to it.
func newClient(t *testing.T) (*hub.Hub, *pbclient.Client) {
	t.Helper()
	v, err := auth.NewVerifier(auth.Config{HMACSecretKey: secret})
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.Start(t, hub.Config{
		Engine: memory.New(memory.Config{}), Tokens: v, Logger: slog.New(slog.DiscardHandler),
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true}},
	})
	conn, _ := hubtest.Dial(h, protocol.TypeProtobuf)
	t.Cleanup(conn.Drop)
	return h, pbclient.New(t, wire.Mem(conn), secret)
}

// TestReplyKeepsEarlierMessages: Reply finds a reply by id and leaves the
// pushes that came before it for Next, in order.
func TestReplyKeepsEarlierMessages(t *testing.T) {
	h, c := newClient(t)
	if res := c.Connect("ann"); res.Client == "" {
		t.Fatalf("connect result without a client id: %v", res)
	}
	if r := c.Call(&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "news"}}); r.Subscribe == nil {
		t.Fatalf("subscribe: %v", r)
	}
	for _, data := range []string{`{"n":1}`, `{"n":2}`} {
		if _, err := h.Publish(t.Context(), "news", []byte(data), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Both publications were delivered before the command was sent.
	if r := c.Call(&protocol.Command{Id: 3, Subscribe: &protocol.SubscribeRequest{Channel: "news"}}); r.Error == nil || r.Error.Code != 105 {
		t.Fatalf("second subscribe: %v, want error 105", r)
	}
	for i, want := range []string{`{"n":1}`, `{"n":2}`} {
		r := c.Next()
		if r.Push == nil || r.Push.Pub == nil || string(r.Push.Pub.Data) != want {
			t.Fatalf("message %d: %v, want a publication of %s", i, r, want)
		}
	}
}

// TestExpectClose: a frame that is not Protobuf closes the connection with
// the protocol's code.
func TestExpectClose(t *testing.T) {
	_, c := newClient(t)
	c.SendRaw([]byte{0xff, 0xff, 0xff})
	c.ExpectClose(3501, "bad request")
}
