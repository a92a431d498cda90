package cluster_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/auth"
)

// msg is the part of a server message the walkthrough looks at.
type msg struct {
	ID    int `json:"id"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Connect   *struct{ Client string } `json:"connect"`
	Subscribe *struct {
		Epoch        string    `json:"epoch"`
		Offset       uint64    `json:"offset"`
		Recovered    bool      `json:"recovered"`
		Publications []pubBody `json:"publications"`
	} `json:"subscribe"`
	Push *struct {
		Channel string   `json:"channel"`
		Pub     *pubBody `json:"pub"`
	} `json:"push"`
}

type pubBody struct {
	Data   json.RawMessage `json:"data"`
	Offset uint64          `json:"offset"`
}

// wsClient is a Centrifugo-protocol JSON client as an SDK behaves: it
// remembers the last offset and epoch of its subscription, so that after a
// reconnect it resubscribes with recovery.
type wsClient struct {
	user    string
	conn    *gws.Conn
	pending []msg
	epoch   string
	offset  uint64
}

// dialClient connects user through url and subscribes to channel, or
// returns why it could not (the failover loop retries on an error).
func dialClient(url, secret, user, channel string, recoverFrom *wsClient) (*wsClient, *msg, error) {
	signer, err := auth.NewHMACSigner(secret, "HS256")
	if err != nil {
		return nil, nil, err
	}
	tok, err := signer.ConnectToken(auth.ConnectClaims{User: user, ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		return nil, nil, err
	}
	d := gws.Dialer{HandshakeTimeout: 3 * time.Second}
	conn, resp, err := d.Dial(url, nil)
	if err != nil {
		if resp != nil {
			return nil, nil, fmt.Errorf("dial %s: %w (HTTP %s)", url, err, resp.Status)
		}
		return nil, nil, fmt.Errorf("dial %s: %w", url, err)
	}
	c := &wsClient{user: user, conn: conn}
	connect, _ := json.Marshal(map[string]any{"id": 1, "connect": map[string]any{"token": tok}})
	sub := map[string]any{"channel": channel}
	if recoverFrom != nil {
		sub["recover"], sub["epoch"], sub["offset"] = true, recoverFrom.epoch, recoverFrom.offset
		c.epoch, c.offset = recoverFrom.epoch, recoverFrom.offset
	}
	subscribe, _ := json.Marshal(map[string]any{"id": 2, "subscribe": sub})
	var replies []*msg
	for i, frame := range [][]byte{connect, subscribe} {
		if err := conn.WriteMessage(gws.TextMessage, frame); err != nil {
			conn.Close()
			return nil, nil, err
		}
		m, err := c.reply(i + 1)
		if err != nil {
			conn.Close()
			return nil, nil, err
		}
		replies = append(replies, m)
	}
	s := replies[1].Subscribe
	if s == nil {
		conn.Close()
		return nil, nil, fmt.Errorf("subscribe %s: no result", channel)
	}
	c.epoch, c.offset = s.Epoch, s.Offset
	return c, replies[1], nil
}

// reply reads until the reply with id, keeping pushes for later.
func (c *wsClient) reply(id int) (*msg, error) {
	for {
		m, err := c.read(5 * time.Second)
		if err != nil {
			return nil, err
		}
		if m.ID == 0 {
			c.pending = append(c.pending, m)
			continue
		}
		if m.ID != id {
			return nil, fmt.Errorf("reply %d while waiting for %d", m.ID, id)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("reply %d: error %d %s", id, m.Error.Code, m.Error.Message)
		}
		return &m, nil
	}
}

// read returns the next message that is not a ping, answering pings.
func (c *wsClient) read(timeout time.Duration) (msg, error) {
	if len(c.pending) > 0 {
		m := c.pending[0]
		c.pending = c.pending[1:]
		return m, nil
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(timeout))
	for {
		_, data, err := c.conn.ReadMessage()
		if err != nil {
			return msg{}, err
		}
		var out []msg
		for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			if len(line) == 0 || string(line) == "{}" {
				_ = c.conn.WriteMessage(gws.TextMessage, []byte("{}")) // pong
				continue
			}
			var m msg
			if err := json.Unmarshal(line, &m); err != nil {
				return msg{}, fmt.Errorf("message %s: %w", line, err)
			}
			out = append(out, m)
		}
		if len(out) > 0 {
			c.pending = append(c.pending, out[1:]...)
			return out[0], nil
		}
	}
}

// awaitPub reads until the publication whose data holds text, recording
// its offset, and fails the test after 10 s.
func (c *wsClient) awaitPub(t *testing.T, text string) {
	t.Helper()
	for {
		m, err := c.read(10 * time.Second)
		if err != nil {
			t.Fatalf("%s waiting for %q: %v", c.user, text, err)
		}
		if m.Push != nil && m.Push.Pub != nil {
			c.offset = m.Push.Pub.Offset
			if strings.Contains(string(m.Push.Pub.Data), text) {
				return
			}
		}
	}
}

// awaitClose reads until the server closes the connection and returns the
// close code.
func (c *wsClient) awaitClose(t *testing.T, limit time.Duration) int {
	t.Helper()
	for {
		m, err := c.read(limit)
		if err == nil {
			if m.Push != nil && m.Push.Pub != nil {
				c.offset = m.Push.Pub.Offset
			}
			continue
		}
		var ce *gws.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		t.Fatalf("%s: want a close from the server, got %v", c.user, err)
	}
}

// api calls a server API method and decodes its result into out.
func api(t *testing.T, base, key, method string, body any, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, base+"/api/"+method, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("api %s: %v", method, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var r struct {
		Error  json.RawMessage `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(data, &r); err != nil || resp.StatusCode != http.StatusOK || r.Error != nil {
		t.Fatalf("api %s: %s %s", method, resp.Status, data)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			t.Fatalf("api %s result %s: %v", method, r.Result, err)
		}
	}
}

// sseClient is an SSE connection (/connection/sse) through the load
// balancer, its token subscribing it to channels on connect.
type sseClient struct {
	resp  *http.Response
	lines *bufio.Scanner
}

// dialSSE opens the stream and reads its first event, the connect reply.
func dialSSE(t *testing.T, base, secret, user string, channels []string) *sseClient {
	t.Helper()
	signer, err := auth.NewHMACSigner(secret, "HS256")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := signer.ConnectToken(auth.ConnectClaims{User: user, ExpiresAt: time.Now().Add(time.Hour), Channels: channels})
	if err != nil {
		t.Fatal(err)
	}
	connect, _ := json.Marshal(map[string]any{"id": 1, "connect": map[string]any{"token": tok}})
	req, err := http.NewRequest(http.MethodGet, base+"/connection/sse?cf_connect="+url.QueryEscape(string(connect)), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("sse through the load balancer: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("sse through the load balancer: %s %s", resp.Status, body)
	}
	c := &sseClient{resp: resp, lines: bufio.NewScanner(resp.Body)}
	if first := c.await(t, `"connect"`); !strings.Contains(first, `"id":1`) {
		t.Fatalf("sse: the first event should be the connect reply, got %s", first)
	}
	return c
}

// await returns the first data line holding s, failing the test if the
// stream ends or 10 s pass (the stream is closed then, which ends the read).
func (c *sseClient) await(t *testing.T, s string) string {
	t.Helper()
	timer := time.AfterFunc(10*time.Second, func() { c.resp.Body.Close() })
	defer timer.Stop()
	for c.lines.Scan() {
		if line := c.lines.Text(); strings.HasPrefix(line, "data:") && strings.Contains(line, s) {
			return line
		}
	}
	t.Fatalf("sse: no event with %s (%v)", s, c.lines.Err())
	return ""
}
