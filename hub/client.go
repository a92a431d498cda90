package hub

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"golang.org/x/time/rate"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

type clientState uint8

const (
	stateConnecting clientState = iota // waiting for the connect command
	stateConnected
	stateClosed
)

// Client is one connection. The transport feeds it frames; the hub feeds
// it publications. An idle client holds no buffer and no goroutine: its
// write queue is nil and one runtime timer covers pings and expiry.
//
// Its methods are grouped by what they own, in files named after it:
// the connection's lifecycle in client.go and lifecycle_*.go (connect,
// timers, expiry and refresh, close), command handling in command*.go (the
// dispatch and one file per command), subscriptions in subscription*.go,
// and delivery to the client in delivery*.go (fan-out, encoding, the write
// queue and its writers).
//
// Its state is split by responsibility into structs embedded by value (no
// pointer, no allocation of their own), each defined in the file that
// works on it: identity here, subscriptions in subscription.go,
// commandQueue in command_exec.go, writeQueue in delivery_writer.go,
// timers in lifecycle_timer.go, and expiry (in identity and in every
// subscription) in lifecycle_refresh.go. One mutex, mu, guards them all:
// they change together (a connect sets state, expiry and timers at once)
// and a client is never busy enough for one lock to contend.
type Client struct {
	// What the transport opened; never changes.
	hub       *Hub
	transport Transport
	id        string
	conn      connInfo
	proto     protocol.Type

	// The lifecycle: state is guarded by mu; unusable, set when connect
	// was refused with an error reply, is read without it.
	state clientState
	// noCompaction: the client cannot route pushes by channel id
	// (compaction.go); set at connect. Beside state, in its padding.
	noCompaction bool
	unusable     atomic.Bool

	mu sync.Mutex
	identity
	subscriptions
	rare *rareState // what few connections have: token jti/iat, map keys set (client_rare.go)
	commandQueue
	writeQueue
	timers
}

// connInfo is ConnInfo as a Client keeps it: without Admission, which the
// hub holds apart only until the client connects (Hub.admissions).
type connInfo struct {
	RemoteAddr     string
	Transport      string
	Unidirectional bool
	Session        string
	Header         map[string][]string
	Credentials    *ConnectReply
}

// identity is who the client is, as connect (or the last refresh) made it.
type identity struct {
	user        string
	info        []byte
	meta        []byte // the application's data about the connection, never sent to it
	connectedAt int64  // Unix milliseconds when connect succeeded
	expiry
}

func newClient(h *Hub, t Transport, info ConnInfo) *Client {
	if info.Transport == "" {
		info.Transport = TransportWebSocket
	}
	c := &Client{
		hub:       h,
		transport: t,
		proto:     t.Protocol(),
		id:        uuid.NewString(),
		conn: connInfo{
			RemoteAddr: info.RemoteAddr, Transport: info.Transport, Unidirectional: info.Unidirectional,
			Session: info.Session, Header: info.Header, Credentials: info.Credentials,
		},
	}
	if h.client.CommandRateLimit > 0 {
		c.limiter = rate.NewLimiter(rate.Limit(h.client.CommandRateLimit), h.client.CommandRateBurst)
	}
	c.staleAt = time.Now().Add(h.client.StaleCloseDelay).UnixNano()
	return c
}

// ID is the client's connection id, sent to it in the connect reply.
func (c *Client) ID() string { return c.id }

// User is the authenticated user, empty for anonymous clients and before
// connect.
func (c *Client) User() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.user
}

// Transport is the name of the client's transport (TransportWebSocket, ...).
func (c *Client) Transport() string { return c.conn.Transport }

// Protocol is the client's encoding.
func (c *Client) Protocol() protocol.Type { return c.proto }

// RemoteAddr is the client's address as the transport saw it.
func (c *Client) RemoteAddr() string { return c.conn.RemoteAddr }

// Header is the header of the HTTP request that opened the connection
// (nil when there was none). It must not be modified.
func (c *Client) Header() map[string][]string { return c.conn.Header }

// Session is the emulation session of an HTTP-streaming or SSE client,
// empty for other transports.
func (c *Client) Session() string { return c.conn.Session }

// Unidirectional reports a client that only receives.
func (c *Client) Unidirectional() bool { return c.conn.Unidirectional }

// Info is the connection's info (conn_info), as authentication or the
// last refresh set it.
func (c *Client) Info() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

// Meta is the application's data about the connection that the client
// never sees (ConnectReply.Meta), as authentication set it.
func (c *Client) Meta() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.meta
}

// Send pushes an asynchronous message to the client (the message push).
func (c *Client) Send(data []byte) error {
	msg, err := c.encodePush(&protocol.Push{Message: &protocol.Message{Data: data}})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateConnected {
		return errors.New("client not connected")
	}
	c.enqueueLocked(msg)
	c.hub.metrics.sent["message"].Inc()
	return nil
}

// Disconnect closes the client's connection with code and reason.
func (c *Client) Disconnect(code uint32, reason string) {
	c.close(&Disconnect{Code: code, Reason: reason})
}

// HandleClose tells the client that its connection is gone.
func (c *Client) HandleClose() {
	c.close(&Disconnect{Code: 3000, Reason: "connection closed"})
}

// close ends the connection: it stops timers, leaves every channel, and
// asks the transport to close after the queued messages are written.
func (c *Client) close(d *Disconnect) {
	c.mu.Lock()
	if c.state == stateClosed {
		c.mu.Unlock()
		return
	}
	wasConnected := c.state == stateConnected
	c.state = stateClosed
	subs := c.subs
	c.subs = nil
	for _, s := range subs {
		s.active = false
		s.endStream()
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	c.pendingClose = d
	if !c.flushing {
		c.flushing = true
		go c.flushLoop()
	}
	// A command still running or waiting is of no use to anyone now.
	if c.cancelCmd != nil {
		c.cancelCmd()
	}
	c.tasks = nil
	user := c.user
	c.mu.Unlock()

	h := c.hub
	h.forget(c)
	h.metrics.disconnect(d.Code)
	if !wasConnected {
		h.unpend(c)
		return
	}
	for _, s := range subs {
		h.removeSubscriber(c, s.channel)
	}
	h.users.remove(user, c)
	h.clients.Add(-1)
	if h.traces.active() {
		for ch := range subs {
			h.traceClient(c, TraceUnsubscribe, ch, d.Code, d.Reason)
		}
		h.traceClient(c, TraceDisconnect, "", d.Code, d.Reason)
	}
	if d.Code != 3000 {
		c.logger().Debug("disconnect", "code", d.Code, "reason", d.Reason)
	}
	// Presence removal and leave events are engine I/O, and OnDisconnect
	// is the application's code: close runs on transport read workers,
	// timers and engine deliveries, none of which may wait for either, so
	// they get a goroutine of their own.
	fn := h.cfg.Handlers.OnDisconnect
	if fn == nil && !announcesLeave(subs) {
		return
	}
	h.goBackground(func() {
		ctx, cancel := context.WithTimeout(context.Background(), h.client.CommandTimeout)
		defer cancel()
		for _, s := range subs {
			c.announceLeave(ctx, s)
		}
		if fn != nil {
			fn(c, DisconnectEvent{Code: d.Code, Reason: d.Reason})
		}
	})
}

// announcesLeave reports whether leaving any of subs takes engine I/O.
func announcesLeave(subs map[string]*subscription) bool {
	for _, s := range subs {
		if s.presence || s.joinLeave {
			return true
		}
	}
	return false
}

// clientInfo is the ClientInfo of this client in a channel.
func (c *Client) clientInfo(chanInfo []byte) *engine.ClientInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &engine.ClientInfo{User: c.user, Client: c.id, ConnInfo: c.info, ChanInfo: chanInfo}
}

func (c *Client) logger() *slog.Logger {
	return c.hub.log.With("client", c.id, "remote", c.conn.RemoteAddr)
}

// connectionInfo describes c if it is connected and, when channel is not
// empty, subscribed to it.
func (c *Client) connectionInfo(channel string) (ConnectionInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateConnected {
		return ConnectionInfo{}, false
	}
	if channel != "" {
		if _, ok := c.subs[channel]; !ok {
			return ConnectionInfo{}, false
		}
	}
	chans := make([]string, 0, len(c.subs))
	for ch := range c.subs {
		chans = append(chans, ch)
	}
	slices.Sort(chans)
	return ConnectionInfo{
		Client: c.id, User: c.user, Transport: c.conn.Transport, Protocol: c.proto.String(),
		Node: c.hub.nodeID, ConnectedAt: c.connectedAt, Channels: chans,
		Info: jsonOrNil(c.info), Meta: jsonOrNil(c.meta),
	}, true
}

// jsonOrNil passes b on when it is JSON (connection info and meta usually
// are), and leaves it out otherwise, since the answer is JSON.
func jsonOrNil(b []byte) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return json.RawMessage(b)
}
