package hub

import (
	"context"
	"errors"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// Command execution: handleCommand dispatches one command to its handler
// (lifecycle_connect.go, subscription.go, command_publish.go, command_presence.go, command_history.go, command_rpc.go,
// command_send.go, lifecycle_refresh.go) and turns the handler's error into the reply or the
// disconnect.

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
		if int(c.overLimit.Add(1)) > c.hub.client.CommandRateBurst {
			c.logger().Info("command rate limit exceeded repeatedly", "limit_per_second", c.hub.client.CommandRateLimit)
			return newDisconnect(protocol.DisconnectTooManyRequests)
		}
		return c.reply(cmd.Id, newError(protocol.ErrorTooManyRequests))
	} else if c.limiter != nil {
		c.overLimit.Store(0)
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
			return c.refuseUniConnect(err) // uniconnect.go
		}
		var d *Disconnect
		if err != nil && !errors.As(err, &d) {
			// A refused connect leaves the connection unusable: later
			// commands close it, and so does the stale timer.
			c.unusable.Store(true)
		}
		return c.reply(cmd.Id, err)
	}
	if c.hub.rates != nil && cmd.Connect == nil && c.rateLimited(ctx, commandName(cmd), rpcMethod(cmd), commandChannel(cmd), c.User()) {
		return c.reply(cmd.Id, rateRefusal())
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
	c.queueReply(&protocol.Reply{Id: id, Error: e.Proto()})
	if c.tooManyErrors(e.Code) {
		c.logger().Info("too many error replies: closing the connection (client.rate_limit.client_error)")
		return newDisconnect(protocol.DisconnectTooManyErrors)
	}
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
		switch e.Code {
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
func (c *Client) queueReply(r *protocol.Reply) { c.queueReplySized(r, 0) }

// queueReplySized is queueReply for a reply of about size bytes (its
// admission's estimate, replyadmission.go), encoded into a buffer of that
// capacity: a JSON reply of megabytes appended to an empty buffer is
// copied as the buffer doubles, and the garbage of the copies is as large
// as the reply (bench/attacks.sh noread's peak RSS). Protobuf sizes its
// buffer exactly already.
func (c *Client) queueReplySized(r *protocol.Reply, size int) {
	msg, err := encodeReplySized(c.proto, r, size)
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
	c.replyQueued = true // written without waiting for the coalescing interval
	c.enqueueLocked(msg)
	c.mu.Unlock()
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

// channelCommand runs the checks every channel command shares: a channel
// is required (3501 otherwise, as in the reference), then its namespace.
// It also reports whether the client is subscribed, and the subscription.
func (c *Client) channelCommand(ch string) (*rule, *subscription, error) {
	if ch == "" {
		return nil, nil, newDisconnect(protocol.DisconnectBadRequest)
	}
	r, e := c.hub.channels.resolve(ch)
	if e != nil {
		return nil, nil, e
	}
	c.mu.Lock()
	s := c.subs[ch]
	if s != nil && (!s.active || s.syncing) {
		s = nil
	}
	c.mu.Unlock()
	return r, s, nil
}
