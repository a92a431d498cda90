package httpstream

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// connectAndSubscribe is the first frame of the tests' bidirectional
// clients: connect, then subscribe to news.
func connectAndSubscribe(t *testing.T, pt protocol.Type) []byte {
	return commands(t, pt,
		&protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{Name: "test"}},
		&protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "news"}})
}

// checkSession reads the connect and subscribe replies and returns the
// session and node the connect result names.
func checkSession(t *testing.T, e *env, cs *clientStream) (session, node string) {
	t.Helper()
	r := cs.reply()
	if r.Id != 1 || r.Connect == nil {
		t.Fatalf("first reply %+v, want the connect result", r)
	}
	if r.Connect.Session == "" || r.Connect.Node != e.hub.NodeID() {
		t.Fatalf("connect result: session %q node %q, want a session and node %q", r.Connect.Session, r.Connect.Node, e.hub.NodeID())
	}
	if r := cs.reply(); r.Id != 2 || r.Subscribe == nil {
		t.Fatalf("second reply %+v, want the subscribe result", r)
	}
	return r.Connect.Session, r.Connect.Node
}

func publish(t *testing.T, e *env, ch, data string) {
	t.Helper()
	if _, err := e.hub.Publish(context.Background(), ch, []byte(data), hub.PublishOptions{}); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

// expectPub reads replies until a publication on ch, which must hold data.
func expectPub(t *testing.T, cs *clientStream, ch, data string) {
	t.Helper()
	r := cs.reply()
	if r.Push == nil || r.Push.Pub == nil || r.Push.Channel != ch || string(r.Push.Pub.Data) != data {
		t.Fatalf("reply %+v, want a publication %s on %s", r, data, ch)
	}
}

func TestHTTPStreamJSON(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	cs := e.open(http.MethodPost, pathHTTPStream, "application/json", connectAndSubscribe(t, protocol.TypeJSON))
	if ct := cs.resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	session, node := checkSession(t, e, cs)
	if got := e.hub.NumClients(); got != 1 {
		t.Fatalf("hub holds %d clients, want 1", got)
	}
	publish(t, e, "news", `{"n":1}`)
	expectPub(t, cs, "news", `{"n":1}`)

	// Later commands arrive through the emulation endpoint; their
	// replies on the stream.
	frame := commands(t, protocol.TypeJSON,
		&protocol.Command{Id: 3, Publish: &protocol.PublishRequest{Channel: "news", Data: []byte(`{"n":2}`)}},
		&protocol.Command{Id: 4, Subscribe: &protocol.SubscribeRequest{Channel: "other"}})
	if code, body := e.emulate("application/json", emulationJSONBody(t, session, node, frame)); code != http.StatusNoContent {
		t.Fatalf("emulation: %d %s, want 204", code, body)
	}
	seen := map[uint32]bool{}
	pub := false
	for len(seen) < 2 || !pub {
		r := cs.reply()
		switch {
		case r.Push != nil && r.Push.Pub != nil && string(r.Push.Pub.Data) == `{"n":2}`:
			pub = true
		case r.Id == 3 || r.Id == 4:
			if r.Error != nil {
				t.Fatalf("reply %d: error %v", r.Id, r.Error)
			}
			seen[r.Id] = true
		default:
			t.Fatalf("unexpected reply %+v", r)
		}
	}

	// The client going away closes the hub's client.
	cs.close()
	await(t, "the hub to forget the client", func() bool { return e.hub.NumClients() == 0 })
	// Emulation for the closed session is refused.
	if code, body := e.emulate("application/json", emulationJSONBody(t, session, node, frame)); code != http.StatusNotFound {
		t.Fatalf("emulation for a closed session: %d %s, want 404", code, body)
	}
}

func TestHTTPStreamProtobuf(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	cs := e.open(http.MethodPost, pathHTTPStream, ContentTypeProtobuf, connectAndSubscribe(t, protocol.TypeProtobuf))
	if ct := cs.resp.Header.Get("Content-Type"); ct != ContentTypeProtobuf {
		t.Errorf("Content-Type %q, want %s", ct, ContentTypeProtobuf)
	}
	session, node := checkSession(t, e, cs)
	publish(t, e, "news", `{"n":1}`)
	expectPub(t, cs, "news", `{"n":1}`)

	frame := commands(t, protocol.TypeProtobuf,
		&protocol.Command{Id: 3, Publish: &protocol.PublishRequest{Channel: "news", Data: []byte(`{"n":2}`)}})
	body, err := (&protocol.EmulationRequest{Session: session, Node: node, Data: frame}).MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	if code, msg := e.emulate(ContentTypeProtobuf, body); code != http.StatusNoContent {
		t.Fatalf("emulation: %d %s, want 204", code, msg)
	}
	gotReply, gotPub := false, false
	for !gotReply || !gotPub {
		r := cs.reply()
		switch {
		case r.Id == 3 && r.Error == nil:
			gotReply = true
		case r.Push != nil && r.Push.Pub != nil && string(r.Push.Pub.Data) == `{"n":2}`:
			gotPub = true
		default:
			t.Fatalf("unexpected reply %+v", r)
		}
	}
	// Garbage for a Protobuf session closes it as a bad request, as on
	// WebSocket; the hub reports the session gone at once.
	body, _ = (&protocol.EmulationRequest{Session: session, Node: node, Data: []byte{0xff, 0xff}}).MarshalVT()
	if code, msg := e.emulate(ContentTypeProtobuf, body); code != http.StatusNotFound {
		t.Fatalf("emulation of garbage: %d %s, want 404 (the session closed on it)", code, msg)
	}
	r := cs.reply()
	if r.Push == nil || r.Push.Disconnect == nil || r.Push.Disconnect.Code != uint32(protocol.DisconnectBadRequest) {
		t.Fatalf("reply %+v, want a disconnect push 3501", r)
	}
	cs.expectEOF()
}

func TestSSE(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	connect := commands(t, protocol.TypeJSON, &protocol.Command{Id: 1, Connect: &protocol.ConnectRequest{}})
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			var cs *clientStream
			if method == http.MethodGet {
				cs = e.open(method, pathSSE+"?cf_connect="+urlEscape(string(connect)), "", nil)
			} else {
				cs = e.open(method, pathSSE, "application/json", connect)
			}
			if ct := cs.resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Fatalf("Content-Type %q, want text/event-stream", ct)
			}
			r := cs.reply()
			if r.Id != 1 || r.Connect == nil || r.Connect.Session == "" {
				t.Fatalf("first event %+v, want the connect result with a session", r)
			}
			session, node := r.Connect.Session, r.Connect.Node
			frame := commands(t, protocol.TypeJSON, &protocol.Command{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: "sse"}})
			if code, body := e.emulate("application/json", emulationJSONBody(t, session, node, frame)); code != http.StatusNoContent {
				t.Fatalf("emulation: %d %s", code, body)
			}
			if r := cs.reply(); r.Id != 2 || r.Subscribe == nil {
				t.Fatalf("event %+v, want the subscribe result", r)
			}
			publish(t, e, "sse", `"hello"`)
			expectPub(t, cs, "sse", `"hello"`)
			cs.close()
			await(t, "the hub to forget the client", func() bool { return e.hub.NumClients() == 0 })
		})
	}
}

// TestDrainSendsShutdown: draining the node ends every stream with a
// 3001 disconnect push, the HTTP transports' close frame.
func TestDrainSendsShutdown(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	hs := e.open(http.MethodPost, pathHTTPStream, "application/json", connectAndSubscribe(t, protocol.TypeJSON))
	checkSession(t, e, hs)
	sse := e.open(http.MethodGet, pathSSE+"?cf_connect="+urlEscape(string(connectAndSubscribe(t, protocol.TypeJSON))), "", nil)
	checkSession(t, e, sse)
	if err := e.hub.Drain(ctxFor(t, 10*time.Second), 0); err != nil {
		t.Fatalf("drain: %v", err)
	}
	for _, cs := range []*clientStream{hs, sse} {
		r := cs.reply()
		if r.Push == nil || r.Push.Disconnect == nil || r.Push.Disconnect.Code != uint32(protocol.DisconnectShutdown) {
			t.Fatalf("reply %+v, want a disconnect push 3001", r)
		}
		cs.expectEOF()
	}
}
