package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// wsClient is the shared error-returning JSON protocol client
// (jsonclient.Conn) over a real WebSocket, for tests that check the
// cluster from the clients' side, many clients at a time and from
// goroutines other than the test's, with the user it connected as and the
// connection id the server gave it.
type wsClient struct {
	*jsonclient.Conn
	user   string
	client string // connection id from the connect reply
}

// dialClient connects to s as user with a connection token and reads the
// connect reply. readLimit bounds one incoming message (0: gorilla's
// default, none).
func dialClient(ctx context.Context, s *Server, user string, readLimit int64) (*wsClient, error) {
	return dialAddr(ctx, s.Addr(), user, readLimit, 10*time.Second)
}

// dialAddr connects to the node at addr as user and reads the connect
// reply; timeout bounds the handshake and, again, the connect reply.
func dialAddr(ctx context.Context, addr, user string, readLimit int64, timeout time.Duration) (*wsClient, error) {
	d := gws.Dialer{HandshakeTimeout: timeout}
	conn, _, err := d.DialContext(ctx, "ws://"+addr+WebSocketPath, nil)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if readLimit > 0 {
		conn.SetReadLimit(readLimit)
	}
	c := &wsClient{Conn: jsonclient.NewConn(wire.WebSocket(conn, protocol.TypeJSON)), user: user}
	if err := c.connect(timeout); err != nil {
		c.Close()
		return nil, fmt.Errorf("connect %s to %s: %w", user, addr, err)
	}
	return c, nil
}

// connect sends the connect command with a token for the client's user
// and awaits the reply.
func (c *wsClient) connect(timeout time.Duration) error {
	signer, err := auth.NewHMACSigner("secret", "HS256")
	if err != nil {
		return err
	}
	tok, err := signer.ConnectToken(auth.ConnectClaims{User: c.user})
	if err != nil {
		return err
	}
	res, err := c.Connect(tok, time.Now().Add(timeout))
	if err != nil {
		return err
	}
	c.client = res.Client
	return nil
}

// mustDial is dialClient for the test goroutine: it fails the test on
// error and closes the client when the test ends.
func mustDial(t *testing.T, s *Server, user string) *wsClient {
	t.Helper()
	c, err := dialClient(t.Context(), s, user, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// mustSubscribe subscribes to ch and returns the result; other messages
// read meanwhile are dropped.
func (c *wsClient) mustSubscribe(t *testing.T, ch string) *jsonclient.SubscribeResult {
	t.Helper()
	id, err := c.SubscribeAll([]jsonclient.SubscribeRequest{{Channel: ch}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.AwaitReply(id, time.Now().Add(10*time.Second), nil)
	if err != nil {
		t.Fatalf("%s subscribe %q: %v", c.user, ch, err)
	}
	return m.Subscribe
}

// awaitPush reads until a push that match accepts, skipping others, and
// fails the test at the deadline.
func (c *wsClient) awaitPush(t *testing.T, what string, timeout time.Duration, match func(*jsonclient.Push) bool) *jsonclient.Push {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m, err := c.Next(deadline)
		if err != nil {
			t.Fatalf("%s: waiting for %s: %v", c.user, what, err)
		}
		if m.Push != nil && match(m.Push) {
			return m.Push
		}
	}
}

// apiPost calls the server API of s without failing the test, for
// goroutines other than the test's.
func apiPost(ctx context.Context, s *Server, method string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.Addr()+"/api/"+method, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-API-Key", "k")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("api %s: %w", method, err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("api %s: read answer: %w", method, err)
	}
	if r.StatusCode != http.StatusOK {
		return b, fmt.Errorf("api %s: status %d: %.300s", method, r.StatusCode, b)
	}
	return b, nil
}

// apiResult calls the API and decodes its result into out, turning an
// error answer into an error.
func apiResult(ctx context.Context, s *Server, method string, req, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	b, err := apiPost(ctx, s, method, body)
	if err != nil {
		return err
	}
	var env struct {
		Error  *jsonclient.Error `json:"error"`
		Result json.RawMessage   `json:"result"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("api %s: decode %.300q: %w", method, b, err)
	}
	if env.Error != nil {
		return fmt.Errorf("api %s: %w", method, env.Error)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		return fmt.Errorf("api %s: decode result %.300q: %w", method, env.Result, err)
	}
	return nil
}

// mustAPI is apiResult for the test goroutine.
func mustAPI(t *testing.T, s *Server, method string, req, out any) {
	t.Helper()
	if err := apiResult(t.Context(), s, method, req, out); err != nil {
		t.Fatal(err)
	}
}

// metricValue reads one sample of the node's /metrics: the line that
// starts with name and contains every one of labels.
func metricValue(ctx context.Context, s *Server, name string, labels ...string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.Addr()+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("metrics: %w", err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return 0, fmt.Errorf("metrics: %w", err)
	}
next:
	for line := range strings.Lines(string(b)) {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue next
			}
		}
		f := strings.Fields(line)
		return strconv.ParseFloat(f[len(f)-1], 64)
	}
	return 0, fmt.Errorf("metrics: no sample %s %v", name, labels)
}
