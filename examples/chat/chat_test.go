package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
)

// waitTime bounds every wait for a message from the server.
const waitTime = 5 * time.Second

// fakeBundle stands in for centrifuge-js: these tests speak the protocol
// themselves, and only check that the page gets what it was given.
var fakeBundle = []byte("globalThis.Centrifuge = function () {};\n")

// startChat runs the chat on a free loopback port until the test ends and
// returns its base URL.
func startChat(t *testing.T) string {
	t.Helper()
	base, _, _ := startChatWith(t, defaultLimits())
	return base
}

// startChatWith runs the chat with lim until the test ends. It returns
// the base URL, the server, and stop, which shuts the server down (once;
// the end of the test calls it too) and reports its errors.
func startChatWith(t *testing.T, lim limits) (string, *server, func() error) {
	t.Helper()
	s, err := newServer(fakeBundle, lim, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.start(t.Context(), ln); err != nil {
		t.Fatal(err)
	}
	stop := sync.OnceValue(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return errors.Join(s.shutdown(ctx), <-s.done)
	})
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return "http://" + ln.Addr().String(), s, stop
}

// client is a bare protocol client, so the tests see exactly what the
// server sends.
type client struct {
	t      *testing.T
	conn   *gws.Conn
	nextID int
	queue  []map[string]json.RawMessage // messages read but not consumed
}

// dial opens a WebSocket to the chat and sends connect with data.
func dial(t *testing.T, base, data string) *client {
	t.Helper()
	conn, _, err := gws.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+websocketPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, conn: conn}
	t.Cleanup(func() { _ = conn.Close() })
	c.send("connect", data)
	return c
}

// connect dials and returns once the server accepted the connection.
func connect(t *testing.T, base, name string) *client {
	t.Helper()
	c := dial(t, base, fmt.Sprintf(`{"data":{"name":%q}}`, name))
	if _, err := c.reply(1); err != nil {
		t.Fatalf("connect %s: %v", name, err)
	}
	return c
}

// send sends one command and returns its id.
func (c *client) send(method, body string) int {
	c.t.Helper()
	c.nextID++
	cmd := fmt.Sprintf(`{"id":%d,%q:%s}`, c.nextID, method, body)
	if err := c.conn.WriteMessage(gws.TextMessage, []byte(cmd)); err != nil {
		c.t.Fatalf("send %s: %v", method, err)
	}
	return c.nextID
}

// next returns the first message that match accepts, keeping the others
// for later calls.
func (c *client) next(match func(map[string]json.RawMessage) bool) (map[string]json.RawMessage, error) {
	for {
		for i, m := range c.queue {
			if match(m) {
				c.queue = slices.Delete(c.queue, i, i+1)
				return m, nil
			}
		}
		_ = c.conn.SetReadDeadline(time.Now().Add(waitTime))
		_, frame, err := c.conn.ReadMessage()
		if err != nil {
			return nil, err
		}
		// One frame may carry several messages, one per line.
		for line := range bytes.Lines(frame) {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(line, &m); err != nil {
				return nil, fmt.Errorf("bad message %q: %w", line, err)
			}
			c.queue = append(c.queue, m)
		}
	}
}

// unread lists the messages read but not consumed, for failure messages.
func (c *client) unread() string {
	var b strings.Builder
	for _, m := range c.queue {
		data, _ := json.Marshal(m)
		b.Write(data)
		b.WriteByte(' ')
	}
	return b.String()
}

// reply waits for the reply to command id; an error reply is an error.
func (c *client) reply(id int) (map[string]json.RawMessage, error) {
	m, err := c.next(func(m map[string]json.RawMessage) bool { return string(m["id"]) == fmt.Sprint(id) })
	if err != nil {
		return nil, err
	}
	if e, ok := m["error"]; ok {
		return nil, fmt.Errorf("error reply %s", e)
	}
	return m, nil
}

// call makes an RPC and returns its reply data.
func (c *client) call(method, data string) (string, error) {
	m, err := c.reply(c.send("rpc", fmt.Sprintf(`{"method":%q,"data":%s}`, method, data)))
	if err != nil {
		return "", err
	}
	var rpc struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(m["rpc"], &rpc); err != nil {
		return "", err
	}
	return string(rpc.Data), nil
}

// enter subscribes to the lobby with join/leave events and enters it.
func (c *client) enter() string {
	c.t.Helper()
	if _, err := c.reply(c.send("subscribe", `{"channel":"chat:lobby","join_leave":true}`)); err != nil {
		c.t.Fatalf("subscribe: %v", err)
	}
	who, err := c.call("enter", `{}`)
	if err != nil {
		c.t.Fatalf("enter: %v", err)
	}
	return who
}

// push waits for a push on the lobby whose JSON contains want.
func (c *client) push(want string) error {
	_, err := c.next(func(m map[string]json.RawMessage) bool {
		return m["push"] != nil && strings.Contains(string(m["push"]), want)
	})
	if err != nil {
		return fmt.Errorf("waiting for a push with %s: %w (unread: %s)", want, err, c.unread())
	}
	return nil
}

func TestChat(t *testing.T) {
	base := startChat(t)
	alice := connect(t, base, "alice")
	if who := alice.enter(); who != `{"users":["alice"]}` {
		t.Fatalf("alice entered and sees %s", who)
	}
	if err := alice.push(`"text":"alice joined"`); err != nil {
		t.Fatal(err)
	}

	bob := connect(t, base, "bob")
	if who := bob.enter(); who != `{"users":["alice","bob"]}` {
		t.Fatalf("bob entered and sees %s", who)
	}
	for _, want := range []string{`"join":{"info":{"user":"bob"`, `"text":"bob joined"`} {
		if err := alice.push(want); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := alice.call("say", `{"text":"  hello, bob  "}`); err != nil {
		t.Fatalf("say: %v", err)
	}
	if err := bob.push(`{"kind":"message","user":"alice","text":"hello, bob"}`); err != nil {
		t.Fatal(err)
	}

	// bob opens a second page, which enters unannounced; when the first
	// one goes, bob is still online.
	bob2 := connect(t, base, "bob")
	if who := bob2.enter(); who != `{"users":["alice","bob"]}` {
		t.Fatalf("bob's second page sees %s", who)
	}
	_ = bob.conn.Close()
	if err := alice.push(`"leave":{"info":{"user":"bob"`); err != nil {
		t.Fatal(err)
	}
	if who, err := alice.call("who", `{}`); err != nil || who != `{"users":["alice","bob"]}` {
		t.Fatalf("who = %s, %v", who, err)
	}
	// bob's last page goes: the server announces it, once.
	_ = bob2.conn.Close()
	if err := alice.push(`"text":"bob left"`); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.call("say", `{"text":"bye"}`); err != nil {
		t.Fatalf("say: %v", err)
	}
	if err := alice.push(`"text":"bye"`); err != nil {
		t.Fatal(err)
	}
	if rest := alice.unread(); strings.Contains(rest, "bob joined") || strings.Contains(rest, "bob left") {
		t.Fatalf("bob's second page was announced: %s", rest)
	}
	if who, err := alice.call("who", `{}`); err != nil || who != `{"users":["alice"]}` {
		t.Fatalf("who = %s, %v", who, err)
	}
}

func TestRefusedNames(t *testing.T) {
	base := startChat(t)
	for _, connect := range []string{
		`{}`,
		`{"data":"alice"}`,
		`{"data":{"name":""}}`,
		`{"data":{"name":"alice smith"}}`,
		`{"data":{"name":"<b>"}}`,
		fmt.Sprintf(`{"data":{"name":%q}}`, strings.Repeat("a", 33)),
	} {
		c := dial(t, base, connect)
		_, err := c.next(func(map[string]json.RawMessage) bool { return false })
		var ce *gws.CloseError
		if !errors.As(err, &ce) || ce.Code != codeBadLogin {
			t.Errorf("connect %s: got %v, want close %d", connect, err, codeBadLogin)
		}
	}
	// Any letters will do, not only ASCII.
	connect(t, base, "Zoë_2")
}

func TestRPCErrors(t *testing.T) {
	base := startChat(t)
	c := connect(t, base, "carol")
	for _, tc := range []struct{ method, data, want string }{
		{"enter", `{}`, `"code":403`}, // not subscribed yet
		{"say", `{"text":"hi"}`, `"code":403`},
		{"dance", `{}`, `"code":104`},
	} {
		if _, err := c.call(tc.method, tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: got %v, want an error with %s", tc.method, tc.data, err, tc.want)
		}
	}
	c.enter()
	for _, data := range []string{`{"text":"   "}`, `{"text":42}`, `[]`, fmt.Sprintf(`{"text":%q}`, strings.Repeat("é", maxText+1))} {
		if _, err := c.call("say", data); err == nil || !strings.Contains(err.Error(), `"code":400`) {
			t.Errorf("say %.40s: got %v, want error 400", data, err)
		}
	}
	if _, err := c.call("say", fmt.Sprintf(`{"text":%q}`, strings.Repeat("é", maxText))); err != nil {
		t.Errorf("say %d characters: %v", maxText, err)
	}
}

func TestPage(t *testing.T) {
	base := startChat(t)
	get := func(path string) (int, string, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
	}
	if code, ctype, body := get("/"); code != 200 || !strings.HasPrefix(ctype, "text/html") || !strings.Contains(body, `<script src="/centrifuge.js">`) {
		t.Errorf("GET / = %d %s, page loads centrifuge.js: %v", code, ctype, strings.Contains(body, "/centrifuge.js"))
	}
	if code, ctype, body := get("/centrifuge.js"); code != 200 || !strings.HasPrefix(ctype, "text/javascript") || body != string(fakeBundle) {
		t.Errorf("GET /centrifuge.js = %d %s %q", code, ctype, body)
	}
	if code, _, _ := get("/index.html"); code != 404 {
		t.Errorf("GET /index.html = %d, want 404", code)
	}
}

func TestRunExplainsCentrifugeJS(t *testing.T) {
	t.Setenv("CENTRIFUGE_JS", "")
	var out, errOut bytes.Buffer
	for _, args := range [][]string{nil, {"-centrifuge-js", filepath.Join(t.TempDir(), "missing.js")}} {
		err := run(args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "npm install --prefix /tmp/herald-chat centrifuge") {
			t.Errorf("run %q: %v, want how to get centrifuge-js", args, err)
		}
	}
	if err := run([]string{"-addr", "127.0.0.1:0", "extra"}, &out, &errOut); err == nil {
		t.Error("run with an extra argument: no error")
	}
	empty := filepath.Join(t.TempDir(), "empty.js")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-addr", "127.0.0.1:0", "-centrifuge-js", empty}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("run with an empty bundle: %v", err)
	}
}
