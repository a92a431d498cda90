package websocket

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	gorilla "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/protocol"
)

const uniPath = "/connection/uni_websocket"

// uniTestReceiver records the connect request and writes what the test
// asks for through the connection.
type uniTestReceiver struct {
	u        *UniConn
	connects chan *protocol.ConnectRequest
	closed   chan struct{}
}

func (s *uniTestReceiver) Connect(req *protocol.ConnectRequest) { s.connects <- req }
func (s *uniTestReceiver) HandleClose()                         { close(s.closed) }

func (s *uniTestReceiver) connectRequest(t *testing.T) *protocol.ConnectRequest {
	t.Helper()
	select {
	case req := <-s.connects:
		return req
	case <-time.After(5 * time.Second):
		t.Fatal("no connect request")
		return nil
	}
}

type uniHarness struct {
	t         *testing.T
	hs        *httptest.Server
	receivers chan *uniTestReceiver
}

func newUniHarness(t *testing.T, cfg Config) *uniHarness {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	h := &uniHarness{t: t, receivers: make(chan *uniTestReceiver, 16)}
	srv, err := NewServer(cfg, func(*Conn, *http.Request) Receiver { return nil })
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(uniPath, srv.UniHandler(func(c *UniConn, r *http.Request) UniReceiver {
		s := &uniTestReceiver{u: c, connects: make(chan *protocol.ConnectRequest, 4), closed: make(chan struct{})}
		h.receivers <- s
		return s
	}))
	h.hs = httptest.NewServer(mux)
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Server.Close: %v", err)
		}
		h.hs.Close()
	})
	return h
}

func (h *uniHarness) dial(query string) (*gorilla.Conn, *uniTestReceiver) {
	h.t.Helper()
	u := "ws" + strings.TrimPrefix(h.hs.URL, "http") + uniPath
	if query != "" {
		u += "?" + query
	}
	c, _, err := (&gorilla.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(u, nil)
	if err != nil {
		h.t.Fatalf("dial: %v", err)
	}
	h.t.Cleanup(func() { c.Close() })
	select {
	case s := <-h.receivers:
		return c, s
	case <-time.After(5 * time.Second):
		h.t.Fatal("no receiver")
		return nil, nil
	}
}

func readText(t *testing.T, c *gorilla.Conn) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	mt, p, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if mt != gorilla.TextMessage {
		t.Fatalf("message type %d, want text", mt)
	}
	return string(p)
}

func TestUniWebSocket(t *testing.T) {
	forEachPoller(t, func(t *testing.T, p Poller) {
		h := newUniHarness(t, Config{Poller: p})
		c, s := h.dial("cf_protocol=protobuf") // ignored: uni is JSON only
		if err := c.WriteMessage(gorilla.TextMessage, []byte(`{"token":"abc","name":"curl","subs":{"news":{"recover":true,"offset":5,"epoch":"e"}}}`)); err != nil {
			t.Fatal(err)
		}
		req := s.connectRequest(t)
		if req.Token != "abc" || req.Name != "curl" || req.Subs["news"].GetOffset() != 5 || !req.Subs["news"].GetRecover() {
			t.Fatalf("connect request %+v", req)
		}
		if s.u.Protocol() != protocol.TypeJSON {
			t.Fatalf("protocol %v, want JSON", s.u.Protocol())
		}
		// Later messages are ignored: no second Connect, no close.
		if err := c.WriteMessage(gorilla.TextMessage, []byte(`{"id":2,"subscribe":{"channel":"x"}}`)); err != nil {
			t.Fatal(err)
		}
		// A frame of three replies: a connect result, a publication push
		// and a ping come out as three bare pushes in three frames.
		frame := []byte(`{"id":1,"connect":{"client":"c1","version":"0.1.0","ping":25}}` + "\n" +
			`{"push":{"channel":"news","pub":{"data":{"n":1},"offset":6}}}` + "\n" + `{}`)
		if err := s.u.WriteFrame(frame); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			`{"connect":{"client":"c1","version":"0.1.0","ping":25}}`,
			`{"channel":"news","pub":{"data":{"n":1},"offset":6}}`,
			`{}`,
		} {
			if got := readText(t, c); got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
		}
		select {
		case req := <-s.connects:
			t.Fatalf("second connect %+v", req)
		default:
		}
		// Closing sends a disconnect push, then the close frame.
		s.u.Close(3005, "token expired")
		if got, want := readText(t, c), `{"disconnect":{"code":3005,"reason":"token expired"}}`; got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
		expectClose(t, c, 3005, "token expired")
		select {
		case <-s.closed:
		case <-time.After(5 * time.Second):
			t.Fatal("HandleClose not called")
		}
	})
}

func TestUniWebSocketConnectParam(t *testing.T) {
	forEachPoller(t, func(t *testing.T, p Poller) {
		h := newUniHarness(t, Config{Poller: p})
		c, s := h.dial(UniConnectParam + "=" + url.QueryEscape(`{"token":"from-url"}`))
		if req := s.connectRequest(t); req.Token != "from-url" {
			t.Fatalf("connect request %+v", req)
		}
		// The first message is then not a connect request: ignored.
		if err := c.WriteMessage(gorilla.TextMessage, []byte(`not json`)); err != nil {
			t.Fatal(err)
		}
		if err := s.u.WriteFrame([]byte(`{"push":{"channel":"a","pub":{"data":1}}}`)); err != nil {
			t.Fatal(err)
		}
		if got := readText(t, c); got != `{"channel":"a","pub":{"data":1}}` {
			t.Fatalf("got %s", got)
		}

		// A cf_connect that is not a connect request: 400, no upgrade.
		resp, err := http.Get(h.hs.URL + uniPath + "?" + UniConnectParam + "=" + url.QueryEscape(`[1,2]`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", resp.StatusCode)
		}
	})
}

func TestUniWebSocketBadConnect(t *testing.T) {
	forEachPoller(t, func(t *testing.T, p Poller) {
		h := newUniHarness(t, Config{Poller: p})
		for _, bad := range []string{`not json`, `[]`, `{"token":5}`} {
			c, s := h.dial("")
			if err := c.WriteMessage(gorilla.TextMessage, []byte(bad)); err != nil {
				t.Fatal(err)
			}
			expectClose(t, c, int(protocol.DisconnectBadRequest), "bad request")
			select {
			case <-s.closed:
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: HandleClose not called", bad)
			}
			select {
			case req := <-s.connects:
				t.Fatalf("%s: connect %+v", bad, req)
			default:
			}
		}
	})
}
