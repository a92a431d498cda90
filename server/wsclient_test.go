package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// wsClient is a Centrifugo protocol client over JSON, as SDKs speak it,
// for tests that check the cluster from the clients' side, many clients
// at a time and from goroutines other than the test's: unlike the shared
// jsonclient.Client, whose wire.Wire it reads and writes, it returns errors
// instead of failing the test, decodes messages into typed structs and
// answers server pings itself. Like gorilla's connection, it supports one
// reader and one writer at a time; Close may be called from anywhere.
type wsClient struct {
	w      wire.Wire
	user   string
	client string // connection id from the connect reply
	// pending holds the messages of the last frame not yet returned:
	// a frame may carry several, joined with newlines.
	pending [][]byte
	nextID  uint32
}

// wsMessage is one reply or push, with the fields the tests look at.
type wsMessage struct {
	ID        uint32           `json:"id"`
	Error     *wsError         `json:"error"`
	Push      *wsPush          `json:"push"`
	Connect   *wsConnectResult `json:"connect"`
	Subscribe *wsSubscribed    `json:"subscribe"`
}

type wsError struct {
	Code    uint32 `json:"code"`
	Message string `json:"message"`
}

func (e *wsError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

type wsConnectResult struct {
	Client string `json:"client"`
}

type wsPush struct {
	Channel     string         `json:"channel"`
	Pub         *wsPublication `json:"pub"`
	Join        *wsJoinLeave   `json:"join"`
	Leave       *wsJoinLeave   `json:"leave"`
	Unsubscribe *struct {
		Code   uint32 `json:"code"`
		Reason string `json:"reason"`
	} `json:"unsubscribe"`
}

type wsPublication struct {
	Data   json.RawMessage `json:"data"`
	Offset uint64          `json:"offset"`
}

type wsJoinLeave struct {
	Info struct {
		User   string `json:"user"`
		Client string `json:"client"`
	} `json:"info"`
}

type wsSubscribed struct {
	Recoverable   bool            `json:"recoverable"`
	Positioned    bool            `json:"positioned"`
	Epoch         string          `json:"epoch"`
	Offset        uint64          `json:"offset"`
	WasRecovering bool            `json:"was_recovering"`
	Recovered     bool            `json:"recovered"`
	Publications  []wsPublication `json:"publications"`
}

// wsSubscribe is a subscribe request; Recover asks for what was
// published after Offset in Epoch.
type wsSubscribe struct {
	Channel string `json:"channel"`
	Recover bool   `json:"recover,omitempty"`
	Epoch   string `json:"epoch,omitempty"`
	Offset  uint64 `json:"offset,omitempty"`
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
	c := &wsClient{w: wire.WebSocket(conn, protocol.TypeJSON), user: user, nextID: 1}
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
	id, err := c.send(map[string]any{"connect": map[string]any{"token": tok}})
	if err != nil {
		return err
	}
	m, err := c.awaitReply(id, time.Now().Add(timeout), nil)
	if err != nil {
		return err
	}
	if m.Connect == nil {
		return errors.New("reply without a connect result")
	}
	c.client = m.Connect.Client
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

// Close closes the connection; a read in progress returns an error.
func (c *wsClient) Close() { c.w.Drop() }

// send writes one command with the next id and returns the id.
func (c *wsClient) send(cmd map[string]any) (uint32, error) {
	id := c.nextID
	c.nextID++
	cmd["id"] = id
	b, err := json.Marshal(cmd)
	if err != nil {
		return 0, err
	}
	return id, c.write(b)
}

func (c *wsClient) write(frame []byte) error { return c.w.Write(frame) }

// subscribeAll sends one subscribe command per request, all in one frame,
// and returns the id of the first; the others follow in order.
func (c *wsClient) subscribeAll(reqs []wsSubscribe) (uint32, error) {
	first := c.nextID
	var frame []byte
	for _, r := range reqs {
		b, err := json.Marshal(map[string]any{"id": c.nextID, "subscribe": r})
		if err != nil {
			return 0, err
		}
		c.nextID++
		if len(frame) > 0 {
			frame = append(frame, '\n')
		}
		frame = append(frame, b...)
	}
	return first, c.write(frame)
}

// next returns the next reply or push, waiting until deadline. A server
// ping ({}) is answered and skipped. After an error the client is done:
// a failed read leaves gorilla's connection unusable.
func (c *wsClient) next(deadline time.Time) (*wsMessage, error) {
	for {
		for len(c.pending) > 0 {
			raw := c.pending[0]
			c.pending = c.pending[1:]
			if len(bytes.TrimSpace(raw)) == 0 {
				continue
			}
			if bytes.Equal(bytes.TrimSpace(raw), []byte("{}")) {
				if err := c.write([]byte("{}")); err != nil {
					return nil, err
				}
				continue
			}
			m := &wsMessage{}
			if err := json.Unmarshal(raw, m); err != nil {
				return nil, fmt.Errorf("decode %.200q: %w", raw, err)
			}
			return m, nil
		}
		frame, err := c.w.Read(time.Until(deadline))
		if err != nil {
			return nil, err
		}
		c.pending = bytes.Split(frame, []byte("\n"))
	}
}

// awaitReply reads until the reply to command id, handing every other
// message to other (nil: drop them). A reply with an error is returned as
// the error.
func (c *wsClient) awaitReply(id uint32, deadline time.Time, other func(*wsMessage)) (*wsMessage, error) {
	for {
		m, err := c.next(deadline)
		if err != nil {
			return nil, err
		}
		if m.ID != id {
			if other != nil {
				other(m)
			}
			continue
		}
		if m.Error != nil {
			return m, m.Error
		}
		return m, nil
	}
}

// mustSubscribe subscribes to ch and returns the result; other messages
// read meanwhile are dropped.
func (c *wsClient) mustSubscribe(t *testing.T, ch string) *wsSubscribed {
	t.Helper()
	id, err := c.subscribeAll([]wsSubscribe{{Channel: ch}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.awaitReply(id, time.Now().Add(10*time.Second), nil)
	if err != nil {
		t.Fatalf("%s subscribe %q: %v", c.user, ch, err)
	}
	return m.Subscribe
}

// awaitPush reads until a push that match accepts, skipping others, and
// fails the test at the deadline.
func (c *wsClient) awaitPush(t *testing.T, what string, timeout time.Duration, match func(*wsPush) bool) *wsPush {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m, err := c.next(deadline)
		if err != nil {
			t.Fatalf("%s: waiting for %s: %v", c.user, what, err)
		}
		if m.Push != nil && match(m.Push) {
			return m.Push
		}
	}
}

// awaitClose reads until the server closes the connection and returns
// the close code (0 when the connection ended without a close frame).
func (c *wsClient) awaitClose(timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		_, err := c.next(deadline)
		if err == nil {
			continue
		}
		var ce *wire.CloseError
		if errors.As(err, &ce) {
			return ce.Code, nil
		}
		return 0, err
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
		Error  *wsError        `json:"error"`
		Result json.RawMessage `json:"result"`
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
