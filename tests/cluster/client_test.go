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
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// wsClient is the shared JSON protocol client (jsonclient.Conn) as an SDK
// behaves: it remembers the last offset and epoch of its subscription, so
// that after a reconnect it resubscribes with recovery.
type wsClient struct {
	*jsonclient.Conn
	user string
	// pending holds the pushes read while awaiting a reply, for read.
	pending []*jsonclient.Message
	epoch   string
	offset  uint64
}

// dialClient connects user through url and subscribes to channel, or
// returns why it could not (the failover loop retries on an error).
func dialClient(url, secret, user, channel string, recoverFrom *wsClient) (*wsClient, *jsonclient.Message, error) {
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
	c := &wsClient{Conn: jsonclient.NewConn(wire.WebSocket(conn, protocol.TypeJSON)), user: user}
	sub := jsonclient.SubscribeRequest{Channel: channel}
	if recoverFrom != nil {
		sub.Recover, sub.Epoch, sub.Offset = true, recoverFrom.epoch, recoverFrom.offset
		c.epoch, c.offset = recoverFrom.epoch, recoverFrom.offset
	}
	m, err := c.connectSubscribe(tok, sub)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	c.epoch, c.offset = m.Subscribe.Epoch, m.Subscribe.Offset
	return c, m, nil
}

// connectSubscribe connects with tok, subscribes with sub and returns
// the subscribe reply, keeping the pushes that came before it for read.
func (c *wsClient) connectSubscribe(tok string, sub jsonclient.SubscribeRequest) (*jsonclient.Message, error) {
	if _, err := c.Connect(tok, time.Now().Add(5*time.Second)); err != nil {
		return nil, fmt.Errorf("connect %s: %w", c.user, err)
	}
	id, err := c.SubscribeAll([]jsonclient.SubscribeRequest{sub})
	if err != nil {
		return nil, err
	}
	m, err := c.AwaitReply(id, time.Now().Add(5*time.Second), func(m *jsonclient.Message) {
		c.pending = append(c.pending, m)
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", sub.Channel, err)
	}
	if m.Subscribe == nil {
		return nil, fmt.Errorf("subscribe %s: no result", sub.Channel)
	}
	return m, nil
}

// read returns the next message that is not a ping, the pushes kept while
// awaiting a reply first.
func (c *wsClient) read(timeout time.Duration) (*jsonclient.Message, error) {
	if len(c.pending) > 0 {
		m := c.pending[0]
		c.pending = c.pending[1:]
		return m, nil
	}
	return c.Next(time.Now().Add(timeout))
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
		var ce *wire.CloseError
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
