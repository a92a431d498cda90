package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestMethodNotPost(t *testing.T) {
	n := startNode(t, api.Config{})
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		r := n.do(t, m, "publish", `{"channel":"chat","data":1}`)
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
			t.Errorf("%s: status %d, Allow %q", m, r.status, r.header.Get("Allow"))
		}
	}
}

func TestBodyNotJSON(t *testing.T) {
	n := startNode(t, api.Config{})
	for _, body := range []string{`{`, `nope`, `{"channel":"chat",}`, `{"channel":"chat"} x`} {
		r := n.do(t, http.MethodPost, "publish", body)
		if r.status != http.StatusBadRequest || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
			t.Errorf("%q: status %d, Content-Type %q", body, r.status, r.header.Get("Content-Type"))
		}
	}
	if r := n.do(t, http.MethodPost, "batch", `[`); r.status != http.StatusBadRequest {
		t.Errorf("batch: status %d", r.status)
	}
}

// TestWrongTypes checks that readable JSON with a value of the wrong type
// is a bad request naming the field, not a transport error.
func TestWrongTypes(t *testing.T) {
	n := startNode(t, api.Config{})
	for _, c := range []struct{ method, body, want string }{
		{"publish", `{"channel":5,"data":1}`, "channel: want string, got number"},
		{"publish", `{"channel":"chat","data":1,"tags":{"a":1}}`, "tags: want string, got number"},
		{"publish", `{"channel":"chat","data":1,"skip_history":"yes"}`, "skip_history: want boolean, got string"},
		{"history", `{"channel":"chat","since":{"offset":-1}}`, "since.offset: want integer, got number -1"},
		{"history", `{"channel":"chat","limit":1e12}`, "limit: want integer, got number 1e12"},
		{"broadcast", `{"channels":"chat","data":1}`, "channels: want array, got string"},
		{"disconnect", `{"user":"u","disconnect":"now"}`, "disconnect: want object, got string"},
		{"presence", `["chat"]`, "request body: want object, got array"},
	} {
		if got := n.expectError(t, c.method, c.body, 107); got != c.want {
			t.Errorf("%s %s: message %q, want %q", c.method, c.body, got, c.want)
		}
	}
}

func TestUnknownMethod(t *testing.T) {
	n := startNode(t, api.Config{})
	// The empty path is the single endpoint (legacy_test.go).
	for _, path := range []string{"nope", "publish/x", "Publish"} {
		msg, err := json.Marshal(fmt.Sprintf("method not found: %q", path))
		if err != nil {
			t.Fatal(err)
		}
		r := n.do(t, http.MethodPost, path, `{}`)
		want := `{"error":{"code":104,"message":` + string(msg) + `}}`
		if r.status != http.StatusNotFound || r.body != want {
			t.Errorf("%q: status %d body %s, want 404 %s", path, r.status, r.body, want)
		}
		r = n.do(t, http.MethodPost, path, `{}`, "X-Centrifugo-Error-Mode", "transport")
		want = `{"code":104,"message":` + string(msg) + `}`
		if r.status != http.StatusNotFound || r.body != want {
			t.Errorf("%q transport: status %d body %s, want 404 %s", path, r.status, r.body, want)
		}
	}
}

func TestBodyTooLarge(t *testing.T) {
	n := startNode(t, api.Config{MaxBodySize: 64})
	big := `{"channel":"chat","data":"` + strings.Repeat("x", 100) + `"}`
	if r := n.do(t, http.MethodPost, "publish", big); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413 (body %q)", r.status, r.body)
	}
	// Without a Content-Length the limit is found while reading.
	conn, err := net.Dial("tcp", n.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/publish HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", testKey, len(big), big)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked: status %d, want 413", resp.StatusCode)
	}
	// A body at the limit is fine.
	n.expect(t, "publish", `{"channel":"chat","data":1}`, `{"result":{"offset":1,"epoch":"`+epochOf(t, n, "chat")+`"}}`)
}

func TestEmptyBodyIsEmptyObject(t *testing.T) {
	n := startNode(t, api.Config{})
	if got := n.expectError(t, "publish", ``, 107); got != "channel required" {
		t.Fatalf("message %q", got)
	}
	if m := (response{body: n.call(t, "info", ``)}).json(t); m["result"] == nil {
		t.Fatalf("info with empty body: %v", m)
	}
}

// TestKeepAlive checks that requests, answered or refused, leave the
// connection usable for the next one.
func TestKeepAlive(t *testing.T) {
	n := startNode(t, api.Config{})
	conn, err := net.Dial("tcp", n.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	for i, c := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", "publish", `{"channel":"chat","data":1}`, 200},
		{"POST", "publish", `{"channel":""}`, 200},
		{"POST", "nope", `{}`, 404},
		{"GET", "info", ``, 405},
		{"POST", "publish", `{`, 400},
		{"POST", "info", `{}`, 200},
	} {
		fmt.Fprintf(conn, "%s /api/%s HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nContent-Length: %d\r\n\r\n%s", c.method, c.path, testKey, len(c.body), c.body)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want || resp.Close {
			t.Fatalf("request %d (%s %s): status %d close %v, want %d on a kept connection", i, c.method, c.path, resp.StatusCode, resp.Close, c.want)
		}
	}
}

// TestTransportErrorMode checks the status of each error code, by
// configuration and by request header, and that successes stay 200.
func TestTransportErrorMode(t *testing.T) {
	cases := []struct {
		name, method, body string
		code, status       int
	}{
		{"bad request", "publish", `{"channel":"","data":1}`, 107, 400},
		{"unknown channel", "publish", `{"channel":"nope:chat","data":1}`, 102, 404},
		{"not available", "history", `{"channel":"plain:chat"}`, 108, 400},
		{"unrecoverable", "history", `{"channel":"chat","since":{"offset":0,"epoch":"other"}}`, 112, 416},
		{"rpc", "rpc", `{"method":"x"}`, 108, 400},
	}
	check := func(t *testing.T, n *node, header ...string) {
		for _, c := range cases {
			r := n.do(t, http.MethodPost, c.method, c.body, header...)
			if r.status != c.status {
				t.Errorf("%s: status %d, want %d (%s)", c.name, r.status, c.status, r.body)
				continue
			}
			m := r.json(t)
			if int(m["code"].(float64)) != c.code || m["message"] == "" || len(m) != 2 {
				t.Errorf("%s: body %s, want the bare error %d", c.name, r.body, c.code)
			}
		}
		if r := n.do(t, http.MethodPost, "publish", `{"channel":"chat","data":1}`, header...); r.status != 200 || !strings.HasPrefix(r.body, `{"result":`) {
			t.Errorf("success: %d %s", r.status, r.body)
		}
	}
	t.Run("config", func(t *testing.T) {
		check(t, startNode(t, api.Config{ErrorMode: api.ErrorModeTransport}))
	})
	t.Run("header", func(t *testing.T) {
		n := startNode(t, api.Config{})
		check(t, n, "X-Centrifugo-Error-Mode", "transport")
		// Without the header the same error is a 200.
		if r := n.do(t, http.MethodPost, "publish", `{"channel":"","data":1}`); r.status != 200 {
			t.Errorf("default mode: status %d", r.status)
		}
	})
	t.Run("batch stays 200", func(t *testing.T) {
		n := startNode(t, api.Config{ErrorMode: api.ErrorModeTransport})
		r := n.do(t, http.MethodPost, "batch", `{"commands":[{"publish":{"channel":""}}]}`)
		if r.status != 200 || r.body != `{"replies":[{"error":{"code":107,"message":"channel required"}}]}` {
			t.Errorf("batch: %d %s", r.status, r.body)
		}
	})
}

// TestInternalError checks that an engine failure is answered with 100
// (500 in transport mode) without its details, and logged.
func TestInternalError(t *testing.T) {
	var logs testenv.LockedBuffer
	n := startNode(t, api.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.hub.Shutdown(ctx); err != nil { // closes the engine
		t.Fatal(err)
	}
	n.expect(t, "publish", `{"channel":"chat","data":1}`, `{"error":{"code":100,"message":"internal server error"}}`)
	r := n.do(t, http.MethodPost, "presence", `{"channel":"chat"}`, "X-Centrifugo-Error-Mode", "transport")
	if r.status != http.StatusInternalServerError || r.body != `{"code":100,"message":"internal server error"}` {
		t.Fatalf("transport mode: %d %s", r.status, r.body)
	}
	if got := logs.String(); !strings.Contains(got, "api: hub call failed") || !strings.Contains(got, "method=publish") || !strings.Contains(got, "engine closed") {
		t.Fatalf("log: %s", got)
	}
}

type failingBody struct{}

func (failingBody) Read([]byte) (int, error) { return 0, errors.New("connection reset") }
func (failingBody) Close() error             { return nil }

// TestBodyReadError checks that a body that cannot be read is a plain 500.
func TestBodyReadError(t *testing.T) {
	h := inProcessHandler(t)
	req := httptest.NewRequest(http.MethodPost, "/api/publish", nil)
	req.Body = failingBody{}
	req.Header.Set("X-API-Key", testKey)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusInternalServerError || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("status %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// TestRequestID checks that every response carries the request's id: the
// caller's, or a new one.
func TestRequestID(t *testing.T) {
	n := startNode(t, api.Config{})
	r := n.do(t, http.MethodPost, "info", `{}`, "X-Request-Id", "trace-42")
	if got := r.header.Get("X-Request-Id"); got != "trace-42" {
		t.Errorf("X-Request-Id = %q, want the caller's trace-42", got)
	}
	r = n.do(t, http.MethodPost, "info", `{}`)
	if got := r.header.Get("X-Request-Id"); len(got) != 16 {
		t.Errorf("X-Request-Id = %q, want a new 16-hex-digit id", got)
	}
}
