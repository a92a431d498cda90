package hub

import (
	"context"
	"errors"
	"log/slog"
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
type Client struct {
	hub        *Hub
	transport  Transport
	proto      protocol.Type
	id         string
	remoteAddr string
	conn       ConnInfo // as the transport opened it; never changes

	mu    sync.Mutex
	state clientState
	// unusable is set when connect was refused with an error reply.
	unusable atomic.Bool
	user     string
	info     []byte
	meta     []byte // the application's data about the connection, never sent to it
	// connectedAt is when connect succeeded.
	connectedAt time.Time
	expireAt    int64 // Unix seconds when the connection expires; 0 never
	subs        map[string]*subscription

	// Command execution (exec.go): commands waiting to run, whether a
	// goroutine is running them, and the cancel of the one that runs.
	tasks     []task
	running   bool
	cancelCmd context.CancelFunc

	// Write side (writer.go). processing holds writes back while commands
	// run, since holdSince until holdUntil (Unix nanoseconds) at the
	// latest (exec.go).
	queue        []queued
	queued       int
	flushing     bool
	processing   bool
	holdUntil    int64
	holdSince    int64
	pendingClose *Disconnect
	lastWrite    int64 // hub.mono() of the last write, with WriteCoalesce only (coalesce.go)
	slow         bool  // over the queue limit: closing, nothing more is queued

	// limiter bounds the command rate (nil: no limit); overLimit counts
	// commands refused in a row.
	limiter   *rate.Limiter
	overLimit int

	// Timers (timer.go), in Unix nanoseconds; 0 means not pending.
	timer        *time.Timer
	staleAt      int64
	nextPing     int64
	pongDeadline int64

	// Server-side refresh (serverrefresh.go): the hub, not the client,
	// renews the connection by calling OnRefresh at refreshAt (Unix
	// nanoseconds; 0 while a refresh runs or when none is due).
	hubRefresh bool
	refreshAt  int64
}

func newClient(h *Hub, t Transport, info ConnInfo) *Client {
	if info.Transport == "" {
		info.Transport = TransportWebSocket
	}
	var limiter *rate.Limiter
	if h.client.CommandRateLimit > 0 {
		limiter = rate.NewLimiter(rate.Limit(h.client.CommandRateLimit), h.client.CommandRateBurst)
	}
	return &Client{
		limiter:    limiter,
		hub:        h,
		transport:  t,
		proto:      t.Protocol(),
		id:         uuid.NewString(),
		remoteAddr: info.RemoteAddr,
		conn:       info,
		staleAt:    time.Now().Add(h.client.StaleCloseDelay).UnixNano(),
	}
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
func (c *Client) RemoteAddr() string { return c.remoteAddr }

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
	msg, err := protocol.AppendPush(c.proto, nil, &protocol.Push{Message: &protocol.Message{Data: data}})
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

// handleCommand runs one command. Replies are queued; a non-nil result
// closes the connection.
func (c *Client) handleCommand(ctx context.Context, cmd *protocol.Command) *Disconnect {
	c.mu.Lock()
	state := c.state
	c.mu.Unlock()
	if state == stateClosed {
		return nil
	}
	defer c.hub.metrics.command(commandName(cmd), time.Now())
	// As in the reference server, a command without id is a pong unless
	// it is a send; pongs never get here (HandleFrame answers them).
	if cmd.Id == 0 {
		if state != stateConnected {
			c.logger().Info("send before connect")
			return badRequest("the first command must be connect")
		}
		return asDisconnect(c.handleSend(ctx, cmd.Send))
	}
	if c.unusable.Load() {
		return badRequest("connect was refused; open a new connection")
	}
	if c.limiter != nil && !c.limiter.Allow() {
		c.overLimit++
		if c.overLimit > c.hub.client.CommandRateBurst {
			c.logger().Info("command rate limit exceeded repeatedly", "limit_per_second", c.hub.client.CommandRateLimit)
			return newDisconnect(protocol.DisconnectTooManyRequests)
		}
		return c.reply(cmd.Id, newError(protocol.ErrorTooManyRequests))
	} else if c.limiter != nil {
		c.overLimit = 0
	}
	if state == stateConnecting {
		if cmd.Connect == nil {
			c.logger().Info("command before connect", "command", commandName(cmd))
			return badRequest("the first command must be connect")
		}
		err := c.handleConnect(ctx, cmd.Id, cmd.Connect)
		if err != nil && c.conn.Unidirectional {
			// The client cannot read an error reply, nor retry on this
			// connection: the error becomes a disconnect.
			return uniConnectDisconnect(err)
		}
		var d *Disconnect
		if err != nil && !errors.As(err, &d) {
			// A refused connect leaves the connection unusable: later
			// commands close it, and so does the stale timer.
			c.unusable.Store(true)
		}
		return c.reply(cmd.Id, err)
	}
	var err error
	switch {
	case cmd.Connect != nil:
		c.logger().Info("connect on a connected client")
		return badRequest("already connected")
	case cmd.Subscribe != nil:
		err = c.handleSubscribe(ctx, cmd.Id, cmd.Subscribe)
	case cmd.Unsubscribe != nil:
		err = c.handleUnsubscribe(ctx, cmd.Id, cmd.Unsubscribe)
	case cmd.Publish != nil:
		err = c.handlePublish(ctx, cmd.Id, cmd.Publish)
	case cmd.Presence != nil:
		err = c.handlePresence(ctx, cmd.Id, cmd.Presence)
	case cmd.PresenceStats != nil:
		err = c.handlePresenceStats(ctx, cmd.Id, cmd.PresenceStats)
	case cmd.History != nil:
		err = c.handleHistory(ctx, cmd.Id, cmd.History)
	case cmd.Rpc != nil:
		err = c.handleRPC(ctx, cmd.Id, cmd.Rpc)
	case cmd.Refresh != nil:
		err = c.handleRefresh(ctx, cmd.Id, cmd.Refresh)
	case cmd.SubRefresh != nil:
		err = c.handleSubRefresh(ctx, cmd.Id, cmd.SubRefresh)
	case cmd.Send != nil:
		err = c.handleSend(ctx, cmd.Send)
	default:
		c.logger().Info("unknown command")
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	return c.reply(cmd.Id, err)
}

// reply turns a handler's error into an error reply or a disconnect.
// Handlers queue their own success replies.
func (c *Client) reply(id uint32, err error) *Disconnect {
	if err == nil {
		return nil
	}
	var d *Disconnect
	if errors.As(err, &d) {
		return d
	}
	var e *Error
	if !errors.As(err, &e) {
		c.logger().Error("command failed", "error", err)
		e = newError(protocol.ErrorInternal)
	}
	c.queueReply(&protocol.Reply{Id: id, Error: e.proto()})
	return nil
}

// uniConnectDisconnect is the disconnect a unidirectional client gets for
// a refused connect: the nearest disconnect code to the error's, else
// 3004 (server error).
func uniConnectDisconnect(err error) *Disconnect {
	var d *Disconnect
	if errors.As(err, &d) {
		return d
	}
	var e *Error
	if errors.As(err, &e) {
		switch protocol.ErrorCode(e.Code) {
		case protocol.ErrorTokenExpired, protocol.ErrorExpired:
			return newDisconnect(protocol.DisconnectExpired)
		case protocol.ErrorTooManyRequests:
			return newDisconnect(protocol.DisconnectTooManyRequests)
		case protocol.ErrorPermissionDenied:
			return newDisconnect(protocol.DisconnectPermissionDenied)
		}
	}
	return newDisconnect(protocol.DisconnectServerError)
}

func asDisconnect(err error) *Disconnect {
	if err == nil {
		return nil
	}
	var d *Disconnect
	if errors.As(err, &d) {
		return d
	}
	return newDisconnect(protocol.DisconnectServerError)
}

// queueReply encodes r and queues it.
func (c *Client) queueReply(r *protocol.Reply) {
	msg, err := protocol.AppendReply(c.proto, nil, r)
	if err != nil {
		c.logger().Error("encode reply", "error", err)
		go c.close(newDisconnect(protocol.DisconnectServerError))
		return
	}
	if r.Error != nil {
		c.hub.metrics.errorReply(r.Error.Code)
	} else {
		c.hub.metrics.sent["reply"].Inc()
	}
	c.mu.Lock()
	c.enqueueLocked(msg)
	c.mu.Unlock()
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
	return c.hub.log.With("client", c.id, "remote", c.remoteAddr)
}

func commandName(cmd *protocol.Command) string {
	switch {
	case cmd.Connect != nil:
		return "connect"
	case cmd.Subscribe != nil:
		return "subscribe"
	case cmd.Unsubscribe != nil:
		return "unsubscribe"
	case cmd.Publish != nil:
		return "publish"
	case cmd.Presence != nil:
		return "presence"
	case cmd.PresenceStats != nil:
		return "presence_stats"
	case cmd.History != nil:
		return "history"
	case cmd.Ping != nil:
		return "ping"
	case cmd.Send != nil:
		return "send"
	case cmd.Rpc != nil:
		return "rpc"
	case cmd.Refresh != nil:
		return "refresh"
	case cmd.SubRefresh != nil:
		return "sub_refresh"
	}
	return "unknown"
}
