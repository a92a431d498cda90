package hub

import (
	"context"

	"github.com/heraldhq/herald/protocol"
)

// Leaving a channel: the client's unsubscribe command, the server's
// unsubscriptions (API, expiry, lost publications), and undoing a
// subscription that failed half-way.

// handleUnsubscribe removes the client from a channel it asked to leave;
// leaving a channel it is not in is not an error.
func (c *Client) handleUnsubscribe(ctx context.Context, id uint32, req *protocol.UnsubscribeRequest) error {
	if req.Channel == "" {
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	c.mu.Lock()
	s := c.subs[req.Channel]
	if s != nil {
		delete(c.subs, req.Channel)
		s.active = false
		s.endStream()
	}
	c.mu.Unlock()
	c.queueReply(&protocol.Reply{Id: id, Unsubscribe: &protocol.UnsubscribeResult{}})
	if s != nil {
		// The leave outlives the command: a client that goes away right
		// after its unsubscribe ends the command's context, and a presence
		// removal given up then would leave the entry until its TTL.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.hub.client.CommandTimeout)
		defer cancel()
		c.leave(lctx, s)
		if c.hub.traces.active() {
			c.hub.traceClient(c, TraceUnsubscribe, req.Channel, 0, "client unsubscribed")
		}
	}
	return nil
}

// serverUnsubscribe removes the client from ch and tells it so with an
// unsubscribe push; codes ≥ 2500 make the client subscribe again.
func (c *Client) serverUnsubscribe(ch string, code protocol.UnsubscribeCode) {
	c.unsubscribeIf(ch, nil, code)
}

// unsubscribeIf is serverUnsubscribe limited to the subscription only, when
// only is not nil: a decision taken about one subscription must not remove
// a newer one the client has made since.
func (c *Client) unsubscribeIf(ch string, only *subscription, code protocol.UnsubscribeCode) {
	c.mu.Lock()
	s := c.subs[ch]
	if s == nil || (only != nil && s != only) {
		c.mu.Unlock()
		return
	}
	if s.serverSide && code >= 2500 {
		c.mu.Unlock()
		d := protocol.DisconnectInsufficientState
		switch code {
		case protocol.UnsubscribeExpired:
			d = protocol.DisconnectSubExpired
		case protocol.UnsubscribeStateInvalidated:
			d = protocol.DisconnectStateInvalidated
		}
		c.close(newDisconnect(d))
		return
	}
	delete(c.subs, ch)
	s.active = false
	s.endStream()
	if msg, err := c.encodePush(&protocol.Push{
		Channel: ch, Unsubscribe: &protocol.Unsubscribe{Code: uint32(code), Reason: code.Reason()},
	}); err == nil {
		c.enqueueLocked(msg)
		c.hub.metrics.sent["unsubscribe"].Inc()
	}
	c.mu.Unlock()
	c.hub.removeSubscriber(c, ch)
	if c.hub.traces.active() {
		c.hub.traceClient(c, TraceUnsubscribe, ch, uint32(code), code.Reason())
	}
	if s.presence || s.joinLeave {
		// Called from timers, engine deliveries and the server API: the
		// engine I/O goes to a goroutine of its own.
		c.hub.goBackground(func() {
			ctx, cancel := context.WithTimeout(c.hub.ctx, c.hub.client.CommandTimeout)
			defer cancel()
			c.announceLeave(ctx, s)
		})
	}
}

// dropSubscription undoes a subscription that failed before it was
// registered with the hub.
func (c *Client) dropSubscription(s *subscription) {
	c.mu.Lock()
	if c.subs[s.channel] == s {
		delete(c.subs, s.channel)
	}
	s.active = false
	s.endStream()
	c.mu.Unlock()
}

// leaveChannel undoes a registered subscription that never completed: no
// leave event, since no join was sent.
func (c *Client) leaveChannel(s *subscription) {
	c.dropSubscription(s)
	c.hub.removeSubscriber(c, s.channel)
}

// leave removes a subscription that completed: unregister, then remove
// presence and announce the leave.
func (c *Client) leave(ctx context.Context, s *subscription) {
	c.hub.removeSubscriber(c, s.channel)
	c.announceLeave(ctx, s)
}

// announceLeave removes the client's presence in a channel it left and
// publishes the leave event.
func (c *Client) announceLeave(ctx context.Context, s *subscription) {
	h := c.hub
	if s.rule.Map.RemoveClientOnUnsubscribe {
		c.removeMapClientKey(ctx, s)
	}
	if s.rule.hasMapPresence() {
		c.leaveMapPresence(ctx, s)
	}
	if !s.presence && !s.joinLeave {
		return
	}
	if s.presence {
		if err := h.engine.RemovePresence(ctx, s.channel, c.id); err != nil {
			c.logger().Error("remove presence", "channel", s.channel, "error", err)
		}
	}
	if s.joinLeave && h.joinLeaveAllowed(s.channel, s.rule) {
		if err := h.engine.PublishLeave(ctx, s.channel, c.clientInfo(s.chanInfo)); err != nil {
			c.logger().Error("publish leave", "channel", s.channel, "error", err)
		}
	}
}
