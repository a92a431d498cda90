package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/heraldhq/herald/internal/test/testtoken"
)

// httpStreamClient is a JSON client of /connection/http_stream or
// /connection/sse, as centrifuge-js uses them.
type httpStreamClient struct {
	t       *testing.T
	resp    *http.Response
	rd      *bufio.Reader
	sse     bool
	cancel  context.CancelFunc
	session string
	node    string
}

// token signs a connection token for user with startServer's key.
func token(t *testing.T, user string) string {
	t.Helper()
	return testtoken.Connect(t, "secret", auth.ConnectClaims{User: user})
}

// openStream opens a stream on s at path (HTTPStreamPath or SSEPath) and
// sends the connect command for user; it returns the response for a
// refused request (no client then).
func openStream(t *testing.T, s *Server, path, user string) (*httpStreamClient, *http.Response) {
	t.Helper()
	connect := `{"id":1,"connect":{"token":"` + token(t, user) + `"}}`
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	var req *http.Request
	if path == s.paths.SSE {
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.Addr()+path+"?cf_connect="+url.QueryEscape(connect), nil)
	} else {
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.Addr()+path, strings.NewReader(connect))
		req.Header.Set("Content-Type", "application/json")
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("open %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		cancel()
		return nil, resp
	}
	c := &httpStreamClient{t: t, resp: resp, rd: bufio.NewReader(resp.Body), sse: path == s.paths.SSE || path == s.paths.UniSSE, cancel: cancel}
	t.Cleanup(c.close)
	return c, resp
}

// mustOpenStream opens a stream and reads the connect result.
func mustOpenStream(t *testing.T, s *Server, path, user string) *httpStreamClient {
	t.Helper()
	c, resp := openStream(t, s, path, user)
	if c == nil {
		t.Fatalf("open %s: %s", path, resp.Status)
	}
	var r struct {
		ID      uint32 `json:"id"`
		Connect *struct {
			Session string `json:"session"`
			Node    string `json:"node"`
		} `json:"connect"`
	}
	if err := json.Unmarshal(c.next(), &r); err != nil || r.Connect == nil || r.Connect.Session == "" {
		t.Fatalf("connect result: %+v %v", r, err)
	}
	c.session, c.node = r.Connect.Session, r.Connect.Node
	return c
}

func (c *httpStreamClient) close() {
	c.cancel()
	_ = c.resp.Body.Close()
}

// next reads the next message, skipping pings.
func (c *httpStreamClient) next() []byte {
	c.t.Helper()
	for {
		line, err := c.rd.ReadBytes('\n')
		if err != nil {
			c.t.Fatalf("read stream: %v", err)
		}
		if c.sse {
			data, ok := bytes.CutPrefix(line, []byte("data: "))
			if !ok {
				c.t.Fatalf("SSE line %q", line)
			}
			if _, err := c.rd.ReadBytes('\n'); err != nil {
				c.t.Fatalf("read stream: %v", err)
			}
			line = data
		}
		line = bytes.TrimSpace(line)
		if string(line) != "{}" {
			return line
		}
	}
}

// awaitMessage reads messages until one contains want.
func (c *httpStreamClient) awaitMessage(want string) {
	c.t.Helper()
	for {
		if msg := c.next(); strings.Contains(string(msg), want) {
			return
		}
	}
}

// emulate POSTs commands for c's session to node s.
func (c *httpStreamClient) emulate(s *Server, commands ...string) {
	c.t.Helper()
	body, _ := json.Marshal(map[string]string{"session": c.session, "node": c.node, "data": strings.Join(commands, "\n")})
	req, _ := http.NewRequestWithContext(c.t.Context(), http.MethodPost, "http://"+s.Addr()+s.paths.Emulation, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("emulation: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		c.t.Fatalf("emulation: %s %s", resp.Status, b)
	}
}

func TestHTTPTransportsServe(t *testing.T) {
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true, AllowPublishForSubscriber: true}
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	for _, path := range []string{HTTPStreamPath, SSEPath} {
		t.Run(strings.TrimPrefix(path, "/connection/"), func(t *testing.T) {
			c := mustOpenStream(t, s, path, "alice")
			c.emulate(s, `{"id":2,"subscribe":{"channel":"room"}}`)
			c.awaitMessage(`"id":2,"subscribe"`)
			if body := apiCall(t, s, "publish", `{"channel":"room","data":{"via":"api"}}`); !strings.Contains(body, `"result"`) {
				t.Fatalf("publish: %s", body)
			}
			c.awaitMessage(`"pub":{"data":{"via":"api"}`)
			c.emulate(s, `{"id":3,"publish":{"channel":"room","data":{"via":"client"}}}`)
			c.awaitMessage(`"pub":{"data":{"via":"client"}`)
		})
	}
	// The unidirectional transports are off unless configured.
	for _, path := range []string{UniHTTPStreamPath, UniSSEPath} {
		resp, err := http.Post("http://"+s.Addr()+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s by default: %s, want 404", path, resp.Status)
		}
	}
}

func TestHTTPTransportsUni(t *testing.T) {
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.UniHTTPStream.Enabled = true
	cfg.UniSSE.Enabled = true
	cfg.HTTPStream.Enabled = false
	cfg.SSE.Enabled = false
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	tok := testtoken.Connect(t, "secret", auth.ConnectClaims{User: "bob", Channels: []string{"feed"}})
	for _, path := range []string{UniHTTPStreamPath, UniSSEPath} {
		t.Run(strings.TrimPrefix(path, "/connection/"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			req := uniRequest(ctx, "http://"+s.Addr(), path, tok) // http3_test.go
			req.Close = true
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("open: %v %v", resp, err)
			}
			c := &httpStreamClient{t: t, resp: resp, rd: bufio.NewReader(resp.Body), sse: path == UniSSEPath, cancel: cancel}
			defer c.close()
			if msg := c.next(); !strings.HasPrefix(string(msg), `{"connect":`) || !strings.Contains(string(msg), `"feed"`) {
				t.Fatalf("first push %s, want the connect push with feed", msg)
			}
			apiCall(t, s, "publish", `{"channel":"feed","data":{"n":1}}`)
			if msg := c.next(); !strings.HasPrefix(string(msg), `{"channel":"feed","pub":{"data":{"n":1}`) {
				t.Fatalf("push %s, want the publication", msg)
			}
			apiCall(t, s, "disconnect", `{"user":"bob"}`)
			if msg := c.next(); !strings.HasPrefix(string(msg), `{"disconnect":{"code":3503`) {
				t.Fatalf("push %s, want the disconnect push 3503", msg)
			}
		})
	}
	if resp, err := http.Post("http://"+s.Addr()+EmulationPath, "application/json", strings.NewReader(`{}`)); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusNotFound {
		t.Errorf("emulation without a bidirectional HTTP transport: %s, want 404", resp.Status)
	}
}

// TestHTTPTransportsAdmission: new streams pass the WebSocket's admission
// (here the per-address rate) and are refused with 503 while draining;
// the drain ends the open ones with 3001.
func TestHTTPTransportsAdmission(t *testing.T) {
	cfg := config.Default()
	cfg.WebSocket.Rate = 0.001
	cfg.WebSocket.Burst = 2
	cfg.Shutdown.DrainWindow = time.Duration(time.Second)
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	hs := mustOpenStream(t, s, HTTPStreamPath, "a")
	sse := mustOpenStream(t, s, SSEPath, "b")
	if c, resp := openStream(t, s, HTTPStreamPath, "c"); c != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third stream from one address: %v, want 429", resp.Status)
	}
	// A preflight opens nothing and is not counted.
	req, _ := http.NewRequest(http.MethodOptions, "http://"+s.Addr()+HTTPStreamPath, nil)
	req.Header.Set("Origin", "http://"+s.Addr())
	req.Header.Set("Access-Control-Request-Method", "POST")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("preflight: %v %v, want 204", resp, err)
	} else {
		resp.Body.Close()
	}

	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	testenv.Eventually(t, "new streams refused", 5*time.Second, func() bool {
		c, resp := openStream(t, s, SSEPath, "d")
		if c != nil {
			t.Fatalf("a stream opened while draining")
		}
		return resp.StatusCode == http.StatusServiceUnavailable
	})
	for _, c := range []*httpStreamClient{hs, sse} {
		c.awaitMessage(`{"push":{"disconnect":{"code":3001,"reason":"shutdown"}}}`)
	}
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// TestHTTPStreamOutlivesBodyReadTimeout: the read deadline that bounds
// request bodies (http_api.body_read_timeout) must not end a stream that
// stays open longer.
func TestHTTPStreamOutlivesBodyReadTimeout(t *testing.T) {
	cfg := config.Default()
	cfg.HTTPAPI.Key = "k"
	cfg.HTTPAPI.BodyReadTimeout = time.Duration(100 * time.Millisecond)
	cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	for _, path := range []string{HTTPStreamPath, SSEPath} {
		c := mustOpenStream(t, s, path, "alice")
		c.emulate(s, `{"id":2,"subscribe":{"channel":"late"}}`)
		c.awaitMessage(`"id":2,"subscribe"`)
		// Several times the read deadline, with nothing to read.
		time.Sleep(400 * time.Millisecond)
		apiCall(t, s, "publish", `{"channel":"late","data":{"still":"here"}}`)
		c.awaitMessage(`"pub":{"data":{"still":"here"}`)
		c.close()
	}
}

// TestHTTPStreamsAdmissionCap: a stream counts against
// websocket.max_unauthenticated only until it has authenticated, though
// its request lasts as long as the stream.
func TestHTTPStreamsAdmissionCap(t *testing.T) {
	cfg := config.Default()
	cfg.WebSocket.MaxUnauthenticated = 2
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	for i := range 4 {
		path := HTTPStreamPath
		if i%2 == 1 {
			path = SSEPath
		}
		mustOpenStream(t, s, path, "u")
	}
	if got := s.Hub().NumClients(); got != 4 {
		t.Fatalf("%d clients, want 4", got)
	}
}
