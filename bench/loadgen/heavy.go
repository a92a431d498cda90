package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/heraldhq/herald/protocol"
)

// heavyConn is a ClientHeavy connection: a goroutine of its own that
// reads each message into a new buffer and decodes all of it.
type heavyConn struct {
	pool    *Pool
	ws      *websocket.Conn
	op      int // the data frames' type: text (JSON) or binary (Protobuf)
	sub     int
	pong    bool // the server wants pongs
	closing atomic.Bool
	done    chan struct{}
	end     ownedEnd
}

// The JSON reply, decoded with encoding/json: the fields of the Centrifugo
// protocol a client of this workload meets (replies to connect and
// subscribe, publication, join, leave, unsubscribe and disconnect pushes).
type (
	jsonError struct {
		Code      uint32 `json:"code"`
		Message   string `json:"message"`
		Temporary bool   `json:"temporary"`
	}
	jsonClientInfo struct {
		User     string          `json:"user"`
		Client   string          `json:"client"`
		ConnInfo json.RawMessage `json:"conn_info"`
		ChanInfo json.RawMessage `json:"chan_info"`
	}
	jsonPublication struct {
		Data   json.RawMessage   `json:"data"`
		Info   *jsonClientInfo   `json:"info"`
		Offset uint64            `json:"offset"`
		Tags   map[string]string `json:"tags"`
		Delta  bool              `json:"delta"`
		Time   int64             `json:"time"`
	}
	jsonPush struct {
		Channel string           `json:"channel"`
		Pub     *jsonPublication `json:"pub"`
		Join    *struct {
			Info jsonClientInfo `json:"info"`
		} `json:"join"`
		Leave *struct {
			Info jsonClientInfo `json:"info"`
		} `json:"leave"`
		Unsubscribe *struct {
			Code   uint32 `json:"code"`
			Reason string `json:"reason"`
		} `json:"unsubscribe"`
		Disconnect *struct {
			Code      uint32 `json:"code"`
			Reason    string `json:"reason"`
			Reconnect bool   `json:"reconnect"`
		} `json:"disconnect"`
		Message *struct {
			Data json.RawMessage `json:"data"`
		} `json:"message"`
	}
	jsonReply struct {
		ID      uint32     `json:"id"`
		Error   *jsonError `json:"error"`
		Push    *jsonPush  `json:"push"`
		Connect *struct {
			Client  string          `json:"client"`
			Version string          `json:"version"`
			Expires bool            `json:"expires"`
			TTL     uint32          `json:"ttl"`
			Data    json.RawMessage `json:"data"`
			Ping    uint32          `json:"ping"`
			Pong    bool            `json:"pong"`
			Session string          `json:"session"`
			Node    string          `json:"node"`
		} `json:"connect"`
		Subscribe *struct {
			Expires      bool              `json:"expires"`
			TTL          uint32            `json:"ttl"`
			Recoverable  bool              `json:"recoverable"`
			Epoch        string            `json:"epoch"`
			Offset       uint64            `json:"offset"`
			Publications []jsonPublication `json:"publications"`
			Recovered    bool              `json:"recovered"`
			Positioned   bool              `json:"positioned"`
			Data         json.RawMessage   `json:"data"`
		} `json:"subscribe"`
	}
)

// reply is the part of a decoded JSON reply the connection acts on, in
// the protocol package's types, which the Protobuf decoder fills.
func (r *jsonReply) reply() *protocol.Reply {
	out := &protocol.Reply{Id: r.ID}
	if r.Error != nil {
		out.Error = &protocol.Error{Code: r.Error.Code, Message: r.Error.Message, Temporary: r.Error.Temporary}
	}
	if r.Connect != nil {
		out.Connect = &protocol.ConnectResult{Ping: r.Connect.Ping, Pong: r.Connect.Pong}
	}
	if r.Subscribe != nil {
		out.Subscribe = &protocol.SubscribeResult{Publications: make([]*protocol.Publication, len(r.Subscribe.Publications))}
	}
	if p := r.Push; p != nil {
		out.Push = &protocol.Push{Channel: p.Channel}
		if p.Pub != nil {
			out.Push.Pub = &protocol.Publication{Data: p.Pub.Data}
		}
		if p.Disconnect != nil {
			out.Push.Disconnect = &protocol.Disconnect{Code: p.Disconnect.Code, Reason: p.Disconnect.Reason}
		}
	}
	return out
}

// decodeHeavy decodes every reply of one WebSocket message.
func decodeHeavy(format protocol.Type, msg []byte) ([]*protocol.Reply, error) {
	if format == protocol.TypeProtobuf {
		replies, err := protocol.DecodeReplies(format, msg)
		if err != nil {
			return nil, fmt.Errorf("decode reply: %w", err)
		}
		return replies, nil
	}
	// Replies in one JSON message are separated by newlines; the decoder
	// reads them one after another.
	var out []*protocol.Reply
	dec := json.NewDecoder(bytes.NewReader(msg))
	for {
		var r jsonReply
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("decode reply: %w", err)
		}
		out = append(out, r.reply())
	}
}

// dialHeavy connects and subscribes connection i, reading the replies
// the heavy way; start begins its reading goroutine.
func (p *Pool) dialHeavy(ctx context.Context, i, sub int) (ownedConn, func(), error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	u := p.urls[i%len(p.urls)]
	d := websocket.Dialer{NetDialContext: p.dialer(i).DialContext, HandshakeTimeout: p.cfg.Timeout}
	op := websocket.TextMessage
	if p.cfg.Format == protocol.TypeProtobuf {
		d.Subprotocols = []string{"centrifuge-protobuf"}
		op = websocket.BinaryMessage
	}
	ws, _, err := d.DialContext(ctx, u.String(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("websocket handshake with %s: %w", u.Host, err)
	}
	ws.SetReadLimit(p.cfg.MaxMessage)
	c := &heavyConn{pool: p, ws: ws, op: op, sub: sub, pong: true, done: make(chan struct{})}
	if err := c.handshake(ctx, i); err != nil {
		_ = ws.Close()
		return nil, nil, err
	}
	return c, func() { go c.read() }, nil
}

// handshake sends connect and the subscribes in one message and reads
// until each has its reply.
func (c *heavyConn) handshake(ctx context.Context, i int) error {
	frame, err := c.pool.connectFrame(i)
	if err != nil {
		return err
	}
	deadline, _ := ctx.Deadline()
	_ = c.ws.SetWriteDeadline(deadline)
	if err := c.ws.WriteMessage(c.op, frame); err != nil {
		return fmt.Errorf("send connect: %w", err)
	}
	_ = c.ws.SetReadDeadline(deadline)
	want, got := c.pool.setupReplies(), 0
	for got < want {
		replies, err := c.readMessage()
		if err != nil {
			return fmt.Errorf("waiting for connect/subscribe replies (%d of %d): %w", got, want, err)
		}
		for _, r := range replies {
			if r.Id == 0 {
				if err := c.handle(r); err != nil {
					return err
				}
				continue
			}
			if r.Error != nil {
				return c.pool.setupError(r)
			}
			if r.Connect != nil {
				c.pong = r.Connect.Pong || r.Connect.Ping == 0
			}
			if r.Subscribe != nil {
				c.pool.recovered.Add(int64(len(r.Subscribe.Publications)))
			}
			got++
		}
	}
	_ = c.ws.SetWriteDeadline(time.Time{})
	return c.ws.SetReadDeadline(time.Time{})
}

// readMessage reads one WebSocket message into a buffer of its own and
// decodes it.
func (c *heavyConn) readMessage() ([]*protocol.Reply, error) {
	_, msg, err := c.ws.ReadMessage()
	if err != nil {
		return nil, err
	}
	return decodeHeavy(c.pool.cfg.Format, msg)
}

// handle acts on a reply without an id: a push, or the server's ping.
func (c *heavyConn) handle(r *protocol.Reply) error {
	switch {
	case r.Push != nil && r.Push.Pub != nil:
		c.pool.deliver(c.sub, r.Push.Channel, r.Push.Pub.Data)
	case r.Push != nil:
	case c.pong:
		if err := c.ws.WriteMessage(c.op, pongPayload[c.pool.cfg.Format]); err != nil {
			return fmt.Errorf("send pong: %w", err)
		}
	}
	return nil
}

// read is the connection's goroutine: it reads until the connection ends.
func (c *heavyConn) read() {
	defer close(c.done)
	for {
		replies, err := c.readMessage()
		for _, r := range replies {
			if err == nil && r.Id == 0 {
				err = c.handle(r)
			}
		}
		if err != nil {
			c.ws.Close()
			c.end.finish(c.pool, c, c.closing.Load(), err)
			return
		}
	}
}

// close sends a normal close frame, closes the socket and waits for the
// reading goroutine.
func (c *heavyConn) close() {
	if c.closing.CompareAndSwap(false, true) {
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		_ = c.ws.Close()
	}
	<-c.done
}
