package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

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

func (c *Client) commandContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.hub.ctx, 10*time.Second)
}

func (c *Client) handlePublish(id uint32, req *protocol.PublishRequest) error {
	if req.Channel == "" || len(req.Data) == 0 {
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	r, s, err := c.channelCommand(req.Channel)
	if err != nil {
		return err
	}
	if !permitted(c.User(), r.AllowPublishForAnonymous, r.AllowPublishForClient, r.AllowPublishForSubscriber && s != nil) && !c.hub.client.Insecure {
		return newError(protocol.ErrorPermissionDenied)
	}
	var chanInfo []byte
	if s != nil {
		chanInfo = s.chanInfo
	}
	ctx, cancel := c.commandContext()
	defer cancel()
	pub := &engine.Publication{Data: req.Data, Info: c.clientInfo(chanInfo)}
	if _, err := c.hub.publish(ctx, req.Channel, r, pub); err != nil {
		return err
	}
	c.queueReply(&protocol.Reply{Id: id, Publish: &protocol.PublishResult{}})
	return nil
}

// presenceCommand runs the checks presence and presence_stats share:
// presence on in the namespace (108), then permission (103).
func (c *Client) presenceCommand(ch string) error {
	r, s, err := c.channelCommand(ch)
	if err != nil {
		return err
	}
	if !r.Presence {
		return newError(protocol.ErrorNotAvailable)
	}
	if !c.hasPresencePermission(r, s != nil) {
		return newError(protocol.ErrorPermissionDenied)
	}
	return nil
}

func (c *Client) handlePresence(id uint32, req *protocol.PresenceRequest) error {
	if err := c.presenceCommand(req.Channel); err != nil {
		return err
	}
	ctx, cancel := c.commandContext()
	defer cancel()
	m, err := c.hub.engine.Presence(ctx, req.Channel)
	if err != nil {
		return err
	}
	res := &protocol.PresenceResult{Presence: make(map[string]*protocol.ClientInfo, len(m))}
	for id, info := range m {
		res.Presence[id] = protoClientInfo(info)
	}
	c.queueReply(&protocol.Reply{Id: id, Presence: res})
	return nil
}

func (c *Client) handlePresenceStats(id uint32, req *protocol.PresenceStatsRequest) error {
	if err := c.presenceCommand(req.Channel); err != nil {
		return err
	}
	ctx, cancel := c.commandContext()
	defer cancel()
	st, err := c.hub.engine.PresenceStats(ctx, req.Channel)
	if err != nil {
		return err
	}
	c.queueReply(&protocol.Reply{Id: id, PresenceStats: &protocol.PresenceStatsResult{
		NumClients: uint32(st.NumClients), NumUsers: uint32(st.NumUsers),
	}})
	return nil
}

func (c *Client) handleHistory(id uint32, req *protocol.HistoryRequest) error {
	r, s, err := c.channelCommand(req.Channel)
	if err != nil {
		return err
	}
	if !r.HasHistory() {
		return newError(protocol.ErrorNotAvailable)
	}
	if !c.hasHistoryPermission(r, s != nil) {
		return newError(protocol.ErrorPermissionDenied)
	}
	ctx, cancel := c.commandContext()
	defer cancel()
	var since *engine.StreamPosition
	if req.Since != nil {
		since = &engine.StreamPosition{Offset: req.Since.Offset, Epoch: req.Since.Epoch}
	}
	pubs, pos, err := c.hub.history(ctx, req.Channel, r, since, int(req.Limit), req.Reverse, c.hub.client.HistoryMaxPublicationLimit)
	if err != nil {
		return err
	}
	res := &protocol.HistoryResult{Epoch: pos.Epoch, Offset: pos.Offset, Publications: make([]*protocol.Publication, 0, len(pubs))}
	for _, p := range pubs {
		if c.proto == protocol.TypeJSON && !protocol.ValidJSONPayload(p.Data) {
			return newDisconnect(protocol.DisconnectInappropriateProtocol)
		}
		res.Publications = append(res.Publications, protoPublication(p))
	}
	c.queueReply(&protocol.Reply{Id: id, History: res})
	return nil
}

func (c *Client) handleRPC(id uint32, req *protocol.RPCRequest) error {
	fn := c.hub.cfg.Handlers.OnRPC
	if fn == nil {
		return newError(protocol.ErrorNotAvailable)
	}
	ctx, cancel := c.commandContext()
	defer cancel()
	type answer struct {
		r   RPCReply
		err error
	}
	// Buffered, so a reply after the timeout does not block the handler.
	done := make(chan answer, 1)
	var once sync.Once
	fn(ctx, c, RPCEvent{Method: req.Method, Data: req.Data}, func(r RPCReply, err error) {
		once.Do(func() { done <- answer{r, err} })
	})
	select {
	case a := <-done:
		if a.err != nil {
			return a.err
		}
		c.queueReply(&protocol.Reply{Id: id, Rpc: &protocol.RPCResult{Data: a.r.Data}})
		return nil
	case <-ctx.Done():
		return fmt.Errorf("rpc %q: no reply: %w", req.Method, ctx.Err())
	}
}

func (c *Client) handleSend(req *protocol.SendRequest) error {
	fn := c.hub.cfg.Handlers.OnSend
	if fn == nil {
		return newDisconnect(protocol.DisconnectNotAvailable)
	}
	ctx, cancel := c.commandContext()
	defer cancel()
	if err := fn(ctx, c, SendEvent{Data: req.Data}); err != nil {
		var d *Disconnect
		if errors.As(err, &d) {
			return d
		}
		c.logger().Error("send handler", "error", err)
	}
	return nil
}

// handleRefresh replaces an expiring connection's token.
func (c *Client) handleRefresh(id uint32, req *protocol.RefreshRequest) error {
	h := c.hub
	if req.Token == "" {
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	if h.cfg.Tokens == nil {
		return newDisconnect(protocol.DisconnectInvalidToken)
	}
	tok, err := h.cfg.Tokens.VerifyConnectToken(req.Token)
	if err != nil {
		if errors.Is(err, auth.ErrTokenExpired) {
			return newDisconnect(protocol.DisconnectExpired)
		}
		c.logger().Info("invalid refresh token", "error", err)
		return newDisconnect(protocol.DisconnectInvalidToken)
	}
	now := time.Now()
	c.mu.Lock()
	if tok.User != c.user {
		c.mu.Unlock()
		c.logger().Info("refresh token for another user")
		return newDisconnect(protocol.DisconnectInvalidToken)
	}
	if tok.ExpireAt > 0 && tok.ExpireAt <= now.Unix() {
		c.mu.Unlock()
		return newError(protocol.ErrorExpired)
	}
	// A token without expiry makes the connection non-expiring.
	c.expireAt = tok.ExpireAt
	if tok.Info != nil {
		c.info = tok.Info
	}
	c.resetTimerLocked(now)
	c.mu.Unlock()
	res := &protocol.RefreshResult{Client: c.id, Version: h.cfg.Version}
	if tok.ExpireAt > 0 {
		res.Expires = true
		res.Ttl = uint32(tok.ExpireAt - now.Unix())
	}
	c.queueReply(&protocol.Reply{Id: id, Refresh: res})
	return nil
}

// handleSubRefresh replaces an expiring subscription's token.
func (c *Client) handleSubRefresh(id uint32, req *protocol.SubRefreshRequest) error {
	h := c.hub
	if req.Channel == "" {
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	c.mu.Lock()
	s := c.subs[req.Channel]
	user := c.user
	c.mu.Unlock()
	if s == nil {
		return newError(protocol.ErrorPermissionDenied)
	}
	if req.Token == "" {
		return newError(protocol.ErrorBadRequest)
	}
	if h.cfg.Tokens == nil {
		return newDisconnect(protocol.DisconnectInvalidToken)
	}
	tok, err := h.cfg.Tokens.VerifySubscribeToken(req.Token)
	if err != nil {
		if errors.Is(err, auth.ErrTokenExpired) {
			return newError(protocol.ErrorExpired)
		}
		c.logger().Info("invalid subscription refresh token", "channel", req.Channel, "error", err)
		return newDisconnect(protocol.DisconnectInvalidToken)
	}
	if tok.Channel != req.Channel || tok.User != user || (tok.Client != "" && tok.Client != c.id) {
		return newDisconnect(protocol.DisconnectInvalidToken)
	}
	now := time.Now()
	if tok.ExpireAt > 0 && tok.ExpireAt <= now.Unix() {
		return newError(protocol.ErrorExpired)
	}
	c.mu.Lock()
	s.expireAt = tok.ExpireAt
	if tok.Info != nil {
		s.chanInfo = tok.Info
	}
	c.resetTimerLocked(now)
	c.mu.Unlock()
	res := &protocol.SubRefreshResult{}
	if tok.ExpireAt > 0 {
		res.Expires = true
		res.Ttl = uint32(tok.ExpireAt - now.Unix())
	}
	c.queueReply(&protocol.Reply{Id: id, SubRefresh: res})
	return nil
}
