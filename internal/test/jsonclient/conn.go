package jsonclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/test/wire"
)

// Conn is the JSON protocol client as an SDK uses it, for tests that
// drive many clients at once, from goroutines other than the test's, or
// through a server's failures: unlike Client, its methods return errors
// instead of failing a test, it decodes messages into Message, and it
// answers the server's pings itself. Like gorilla's connection, it
// supports one reader and one writer at a time; Close may be called from
// anywhere.
type Conn struct {
	w wire.Wire
	// pending holds the messages of the last frame not yet returned: a
	// frame may carry several, joined with newlines.
	pending [][]byte
	nextID  uint32
}

// NewConn returns a client on w; its commands are numbered from 1.
func NewConn(w wire.Wire) *Conn { return &Conn{w: w, nextID: 1} }

// Close makes the client go away; a read in progress returns an error.
func (c *Conn) Close() { c.w.Drop() }

// Write sends one frame as given.
func (c *Conn) Write(frame []byte) error { return c.w.Write(frame) }

// Send writes one command (a member such as "subscribe" and its request)
// with the next id and returns the id.
func (c *Conn) Send(cmd map[string]any) (uint32, error) {
	id := c.nextID
	c.nextID++
	cmd["id"] = id
	b, err := json.Marshal(cmd)
	if err != nil {
		return 0, fmt.Errorf("encode command %d: %w", id, err)
	}
	return id, c.Write(b)
}

// SubscribeAll sends one subscribe command per request, all in one frame,
// and returns the id of the first; the others follow in order.
func (c *Conn) SubscribeAll(reqs []SubscribeRequest) (uint32, error) {
	first := c.nextID
	var frame []byte
	for _, r := range reqs {
		b, err := json.Marshal(map[string]any{"id": c.nextID, "subscribe": r})
		if err != nil {
			return 0, fmt.Errorf("encode subscribe %q: %w", r.Channel, err)
		}
		c.nextID++
		if len(frame) > 0 {
			frame = append(frame, '\n')
		}
		frame = append(frame, b...)
	}
	return first, c.Write(frame)
}

// Connect sends a connect command with token and awaits its result until
// deadline.
func (c *Conn) Connect(token string, deadline time.Time) (*ConnectResult, error) {
	id, err := c.Send(map[string]any{"connect": map[string]any{"token": token}})
	if err != nil {
		return nil, err
	}
	m, err := c.AwaitReply(id, deadline, nil)
	if err != nil {
		return nil, err
	}
	if m.Connect == nil {
		return nil, errors.New("reply without a connect result")
	}
	return m.Connect, nil
}

// Next returns the next reply or push, waiting until deadline. A server
// ping ({}) is answered and skipped. After an error the client is done:
// a failed read leaves gorilla's connection unusable.
func (c *Conn) Next(deadline time.Time) (*Message, error) {
	for {
		for len(c.pending) > 0 {
			raw := bytes.TrimSpace(c.pending[0])
			c.pending = c.pending[1:]
			if len(raw) == 0 {
				continue
			}
			if bytes.Equal(raw, []byte("{}")) {
				if err := c.Write([]byte("{}")); err != nil {
					return nil, fmt.Errorf("pong: %w", err)
				}
				continue
			}
			m := &Message{}
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

// AwaitReply reads until the reply to command id, handing every other
// message to other (nil: drop them). A reply with an error is returned
// with the error.
func (c *Conn) AwaitReply(id uint32, deadline time.Time, other func(*Message)) (*Message, error) {
	for {
		m, err := c.Next(deadline)
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

// AwaitClose reads until the server closes the connection, skipping what
// comes before, and returns the close code.
func (c *Conn) AwaitClose(timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		_, err := c.Next(deadline)
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
