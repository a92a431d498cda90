package httpstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/ssetest"
	"github.com/heraldhq/herald/protocol"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Paths the tests mount the handlers on, as the server does.
const (
	pathHTTPStream    = "/connection/http_stream"
	pathSSE           = "/connection/sse"
	pathEmulation     = "/emulation"
	pathUniHTTPStream = "/connection/uni_http_stream"
	pathUniSSE        = "/connection/uni_sse"
)

var quietLogger = slog.New(slog.DiscardHandler)

// env is a started hub on the memory engine with the transports behind
// an httptest server.
type env struct {
	t   *testing.T
	hub *hub.Hub
	srv *Server
	hs  *httptest.Server
}

// newEnv starts an env; hcfg may adjust the hub's configuration (it comes
// with an insecure client config: every client may do everything).
func newEnv(t *testing.T, cfg Config, hcfg func(*hub.Config)) *env {
	t.Helper()
	c := hub.Config{
		Engine: memory.New(memory.Config{}),
		Client: hub.ClientConfig{Insecure: true},
		Logger: quietLogger,
	}
	if hcfg != nil {
		hcfg(&c)
	}
	h, err := hub.New(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	srv := NewServer(h, cfg)
	mux := http.NewServeMux()
	mux.Handle(pathHTTPStream, srv.HTTPStream())
	mux.Handle(pathSSE, srv.SSE())
	mux.Handle(pathEmulation, srv.Emulation())
	mux.Handle(pathUniHTTPStream, srv.UniHTTPStream())
	mux.Handle(pathUniSSE, srv.UniSSE())
	hs := httptest.NewServer(mux)
	e := &env{t: t, hub: h, srv: srv, hs: hs}
	t.Cleanup(func() {
		// The hub closes the streams (3001), so that the handlers return
		// and the test server can close.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("hub shutdown: %v", err)
		}
		hs.CloseClientConnections()
		hs.Close()
	})
	return e
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// await polls cond until it holds or 10 s pass.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// clientStream is the client's end of a stream: it reads messages in
// the stream's framing.
type clientStream struct {
	t      *testing.T
	resp   *http.Response
	rd     *bufio.Reader
	sse    bool
	proto  protocol.Type
	cancel context.CancelFunc
}

// open starts a stream request; the stream lives until close or the
// test's end.
func (e *env) open(method, path, contentType string, body []byte) *clientStream {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	var rb io.Reader
	if body != nil {
		rb = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.hs.URL+path, rb)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.hs.Client().Do(req)
	if err != nil {
		cancel()
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	cs := &clientStream{t: e.t, resp: resp, rd: bufio.NewReader(resp.Body), cancel: cancel,
		sse: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"), proto: protocol.TypeJSON}
	if contentType == ContentTypeProtobuf {
		cs.proto = protocol.TypeProtobuf
	}
	e.t.Cleanup(cs.close)
	return cs
}

func (cs *clientStream) close() {
	cs.cancel()
	_ = cs.resp.Body.Close()
}

// next reads the next message, or fails the test.
func (cs *clientStream) next() []byte {
	cs.t.Helper()
	msg, err := cs.read()
	if err != nil {
		cs.t.Fatalf("read stream: %v", err)
	}
	return msg
}

func (cs *clientStream) read() ([]byte, error) {
	switch {
	case cs.sse:
		return readSSEEvent(cs.rd)
	case cs.proto == protocol.TypeProtobuf:
		var prefix []byte
		for {
			b, err := cs.rd.ReadByte()
			if err != nil {
				return nil, err
			}
			prefix = append(prefix, b)
			if b < 0x80 {
				break
			}
		}
		size, n := protowire.ConsumeVarint(prefix)
		if n < 0 {
			return nil, fmt.Errorf("bad length prefix %x", prefix)
		}
		msg := make([]byte, size)
		_, err := io.ReadFull(cs.rd, msg)
		return msg, err
	}
	line, err := cs.rd.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(line, []byte("\n")), nil
}

// reply reads the next message as a Reply, skipping pings.
func (cs *clientStream) reply() *protocol.Reply {
	cs.t.Helper()
	for {
		msg := cs.next()
		var r protocol.Reply
		var err error
		if cs.proto == protocol.TypeProtobuf {
			err = r.UnmarshalVT(msg)
		} else {
			err = json.Unmarshal(msg, &r)
		}
		if err != nil {
			cs.t.Fatalf("reply %q: %v", msg, err)
		}
		if r.Id == 0 && r.Push == nil {
			continue // a ping
		}
		return &r
	}
}

// push reads the next message of a unidirectional stream as a Push.
func (cs *clientStream) push() *protocol.Push {
	cs.t.Helper()
	msg := cs.next()
	var p protocol.Push
	if err := json.Unmarshal(msg, &p); err != nil {
		cs.t.Fatalf("push %q: %v", msg, err)
	}
	return &p
}

// expectEOF reads until the stream ends, failing on more messages.
func (cs *clientStream) expectEOF() {
	cs.t.Helper()
	if msg, err := cs.read(); err == nil {
		cs.t.Fatalf("message %q after the disconnect push, want the end of the stream", msg)
	} else if err != io.EOF && err != io.ErrUnexpectedEOF {
		cs.t.Fatalf("end of stream: %v, want EOF", err)
	}
}

// commands encodes commands as a frame in encoding t.
func commands(t *testing.T, pt protocol.Type, cmds ...*protocol.Command) []byte {
	t.Helper()
	var frame []byte
	for _, c := range cmds {
		msg, err := protocol.AppendCommand(pt, nil, c)
		if err != nil {
			t.Fatal(err)
		}
		frame = protocol.AppendMessage(pt, frame, msg)
	}
	return frame
}

// emulate POSTs an emulation request and returns the status and body.
func (e *env) emulate(contentType string, body []byte) (int, string) {
	e.t.Helper()
	return post(e.t, e.hs.URL+pathEmulation, contentType, body)
}

func post(t *testing.T, url, contentType string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxFor(t, 10*time.Second), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Close = true // no idle connection outlives the test
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// emulationJSONBody is what centrifuge-js POSTs for JSON sessions.
func emulationJSONBody(t *testing.T, session, node string, frame []byte) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]string{"session": session, "node": node, "data": string(frame)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func urlEscape(s string) string { return url.QueryEscape(s) }

func newReader(resp *http.Response) *bufio.Reader { return bufio.NewReader(resp.Body) }

// readSSEEvent reads one event as a browser's EventSource does and
// returns its data. A field other than data (or a comment) is an error:
// the server sends none, so one is a payload that broke out of its data
// line.
func readSSEEvent(rd *bufio.Reader) ([]byte, error) {
	r := ssetest.NewReader(rd)
	ev, err := r.Next()
	if err != nil {
		return nil, err
	}
	if r.Fields > 0 || ev.Name != "message" {
		return nil, fmt.Errorf("SSE event %+v with %d unknown fields: want only data (a payload broke out of its data line?)", ev, r.Fields)
	}
	return []byte(ev.Data), nil
}
