package test_test

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/hub/hubtest"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/pbclient"
	"github.com/heraldhq/herald/internal/test/testtoken"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "test-clients-secret"

// startHub starts a hub that lets anyone subscribe and returns an
// in-memory connection to it speaking proto, for the tests of the test
// clients.
func startHub(t *testing.T, proto protocol.Type) (*hub.Hub, wire.Wire) {
	t.Helper()
	v, err := auth.NewVerifier(auth.Config{HMACSecretKey: secret})
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.Start(t, hub.Config{
		Engine: memory.New(memory.Config{}), Tokens: v, Logger: slog.New(slog.DiscardHandler),
		Channels: hub.ChannelConfig{WithoutNamespace: hub.NamespaceOptions{AllowSubscribeForClient: true}},
	})
	conn, _ := hubtest.Dial(h, proto)
	t.Cleanup(conn.Drop)
	return h, wire.Mem(conn)
}

func newJSONClient(t *testing.T) (*hub.Hub, *jsonclient.Client) {
	t.Helper()
	h, w := startHub(t, protocol.TypeJSON)
	return h, jsonclient.New(t, w, secret)
}

func newProtobufClient(t *testing.T) (*hub.Hub, *pbclient.Client) {
	t.Helper()
	h, w := startHub(t, protocol.TypeProtobuf)
	return h, pbclient.New(t, w, secret)
}

// TestJSONReplyKeepsEarlierMessages: Reply finds a reply by id and leaves the
// messages that came before it for Next, in order; Drain returns what was
// queued before it was called.
func TestJSONReplyKeepsEarlierMessages(t *testing.T) {
	h, c := newJSONClient(t)
	if res := c.Connect("ann"); res["client"] == "" {
		t.Fatalf("connect result without a client id: %v", res)
	}
	c.MustSubscribe(2, "news", "")
	for _, data := range []string{`{"n":1}`, `{"n":2}`} {
		if _, err := h.Publish(t.Context(), "news", []byte(data), hub.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Both publications were delivered before the command was sent.
	jsonclient.WantError(t, c.Call(`{"id":3,"subscribe":{"channel":"news"}}`), 105)
	for i, want := range []string{`{"n":1}`, `{"n":2}`} {
		m := c.Next()
		if got := jsonclient.Compact(t, jsonclient.Path(m, "push", "pub", "data")); got != want {
			t.Fatalf("message %d: %v, want a publication of %s", i, m, want)
		}
	}
	if _, err := h.Publish(t.Context(), "news", []byte(`{"n":3}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	pubs := jsonclient.PushesOf(c.Drain(), "news", "pub")
	if len(pubs) != 1 || jsonclient.Compact(t, pubs[0]["data"]) != `{"n":3}` {
		t.Fatalf("drain: %v, want the third publication", pubs)
	}
}

// TestJSONExpectClose: bad input closes the connection with the protocol's
// code, which ExpectClose and AwaitClose report.
func TestJSONExpectClose(t *testing.T) {
	_, c := newJSONClient(t)
	c.Send(`{"id":1,"connect":`)
	c.ExpectClose(3501, "bad request")

	_, c = newJSONClient(t)
	c.Send(`not json`)
	ce, err := wire.AwaitClose(c.Wire(), 5*time.Second)
	if err != nil || ce.Code != 3501 {
		t.Fatalf("AwaitClose: %v %v, want 3501", ce, err)
	}
}

func TestJSONHelpers(t *testing.T) {
	m := map[string]any{"id": float64(7), "error": map[string]any{"code": float64(103), "message": "permission denied"}}
	if jsonclient.ErrorCode(m) != 103 || jsonclient.ErrorCode(map[string]any{}) != 0 {
		t.Fatalf("ErrorCode: %d", jsonclient.ErrorCode(m))
	}
	if jsonclient.Num(m["id"]) != 7 || jsonclient.Num("7") != -1 {
		t.Fatal("Num")
	}
	if jsonclient.Path(m, "error", "message") != "permission denied" || jsonclient.Path(m, "error", "code", "x") != nil {
		t.Fatal("Path")
	}
}

// TestJSONConn: the error-returning client connects, subscribes in one frame,
// hands the messages before a reply to its callback, returns an error
// reply as the error, and reports the server's close code.
func TestJSONConn(t *testing.T) {
	h, c := newJSONClient(t)
	conn := jsonclient.NewConn(c.Wire())
	deadline := time.Now().Add(5 * time.Second)
	res, err := conn.Connect(testtoken.Connect(t, secret, auth.ConnectClaims{User: "ann"}), deadline)
	if err != nil || res.Client == "" {
		t.Fatalf("connect: %+v %v", res, err)
	}
	first, err := conn.SubscribeAll([]jsonclient.SubscribeRequest{{Channel: "a"}, {Channel: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := conn.AwaitReply(first+1, deadline, nil); err != nil || m.Subscribe == nil {
		t.Fatalf("second subscribe: %+v %v", m, err)
	}
	if _, err := h.Publish(t.Context(), "a", []byte(`{"n":1}`), hub.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	var before []*jsonclient.Message
	id, err := conn.Send(map[string]any{"subscribe": map[string]any{"channel": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.AwaitReply(id, deadline, func(m *jsonclient.Message) { before = append(before, m) })
	var e *jsonclient.Error
	if !errors.As(err, &e) || e.Code != 105 {
		t.Fatalf("subscribing again: %v, want error 105", err)
	}
	if len(before) != 1 || before[0].Push == nil || string(before[0].Push.Pub.Data) != `{"n":1}` {
		t.Fatalf("messages before the reply: %+v, want the publication", before)
	}
	if err := conn.Write([]byte("not json")); err != nil {
		t.Fatal(err)
	}
	if code, err := conn.AwaitClose(5 * time.Second); err != nil || code != 3501 {
		t.Fatalf("AwaitClose: %d %v, want 3501", code, err)
	}
}

// TestProtobufReplyKeepsEarlierMessages: Reply finds a reply by id and leaves the
// pushes that came before it for Next, in order.
func TestProtobufReplyKeepsEarlierMessages(t *testing.T) {
	h, c := newProtobufClient(t)
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

// TestProtobufExpectClose: a frame that is not Protobuf closes the connection with
// the protocol's code.
func TestProtobufExpectClose(t *testing.T) {
	_, c := newProtobufClient(t)
	c.SendRaw([]byte{0xff, 0xff, 0xff})
	c.ExpectClose(3501, "bad request")
}

// pingWire serves one frame holding a server ping and a push, and records
// what the client writes.
type pingWire struct {
	frames  [][]byte
	written []string
}

func (w *pingWire) Write(frame []byte) error {
	w.written = append(w.written, string(frame))
	return nil
}
func (w *pingWire) Drop() {}
func (w *pingWire) Read(time.Duration) ([]byte, error) {
	if len(w.frames) == 0 {
		return nil, &wire.CloseError{Code: 3000, Reason: "done"}
	}
	f := w.frames[0]
	w.frames = w.frames[1:]
	return f, nil
}

// TestJSONConnAnswersPings: a server ping is answered with a pong and not
// returned, as an SDK does, so a Conn stays connected through long waits.
func TestJSONConnAnswersPings(t *testing.T) {
	w := &pingWire{frames: [][]byte{[]byte("{}\n" + `{"push":{"channel":"a","pub":{"data":{}}}}`)}}
	m, err := jsonclient.NewConn(w).Next(time.Now().Add(time.Second))
	if err != nil || m.Push == nil || m.Push.Channel != "a" {
		t.Fatalf("next: %+v %v, want the push", m, err)
	}
	if len(w.written) != 1 || w.written[0] != "{}" {
		t.Fatalf("written: %q, want one pong", w.written)
	}
}
