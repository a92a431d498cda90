package hub

import (
	"context"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// serverSubscribe subscribes the client to a channel on the server API's
// behalf and tells it with a subscribe push, followed by the publications
// it missed when the API gave a position to recover from.
func (c *Client) serverSubscribe(ctx context.Context, cs *controlSubscribe) {
	c.mu.Lock()
	_, already := c.subs[cs.Channel]
	connected := c.state == stateConnected
	c.mu.Unlock()
	if already || !connected {
		return
	}
	req := &protocol.SubscribeRequest{Channel: cs.Channel}
	if cs.RecoverSince != nil {
		req.Recover, req.Offset, req.Epoch = true, cs.RecoverSince.Offset, cs.RecoverSince.Epoch
	}
	s, err := c.newServerSideSubscription(req, grant{chanInfo: cs.Info, expireAt: cs.ExpireAt, override: cs.Override})
	if err != nil {
		c.logger().Warn("server-side subscribe to a channel the configuration does not allow", "channel", cs.Channel, "error", err)
		return
	}
	if cs.RecoverSince != nil && s.rule.HasHistory() {
		s.recoverable, s.positioned = true, true
	}
	res, err := c.startSubscription(ctx, s, req)
	if err != nil {
		c.logger().Warn("server-side subscribe", "channel", cs.Channel, "error", err)
		return
	}
	push := &protocol.Push{Channel: cs.Channel, Subscribe: &protocol.Subscribe{
		Recoverable: res.Recoverable, Epoch: res.Epoch, Offset: res.Offset, Positioned: res.Positioned, Data: cs.Data,
	}}
	msgs := make([][]byte, 0, 1+len(res.Publications))
	if msg, err := c.encodePush(push); err == nil {
		msgs = append(msgs, msg)
	}
	for _, p := range res.Publications {
		if msg, err := c.encodePush(&protocol.Push{Channel: cs.Channel, Pub: p}); err == nil {
			msgs = append(msgs, msg)
		}
	}
	c.mu.Lock()
	for _, m := range msgs {
		c.enqueueLocked(m)
	}
	c.mu.Unlock()
	c.finishSubscribe(ctx, s)
}

// serverUnsubscribeAll removes the client from every channel.
func (c *Client) serverUnsubscribeAll() {
	c.mu.Lock()
	chans := make([]string, 0, len(c.subs))
	for ch := range c.subs {
		chans = append(chans, ch)
	}
	c.mu.Unlock()
	for _, ch := range chans {
		c.serverUnsubscribe(ch, protocol.UnsubscribeServer)
	}
}

// serverRefresh applies a refresh from the server API.
func (c *Client) serverRefresh(r *controlRefresh) {
	if r.Expired {
		c.close(newDisconnect(protocol.DisconnectExpired))
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.renewLocked(nil, RefreshReply{ExpireAt: r.ExpireAt, Info: r.Info}, time.Now())
}

// targeted reports whether a server API call for client and session (each
// empty for any) is meant for c.
func (c *Client) targeted(client, session string) bool {
	return (client == "" || client == c.id) && (session == "" || session == c.conn.Session)
}
