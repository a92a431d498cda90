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

func (c *Client) handlePublish(ctx context.Context, id uint32, req *protocol.PublishRequest) error {
	if req.Channel == "" || len(req.Data) == 0 {
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	r, s, err := c.channelCommand(req.Channel)
	if err != nil {
		return err
	}
	data, pubRule := req.Data, r
	decided := false
	if fn := c.hub.cfg.Handlers.OnPublish; fn != nil {
		pr, err := fn(ctx, c, PublishEvent{Channel: req.Channel, Data: req.Data})
		if decided = !errors.Is(err, ErrUseDefault); decided {
			if err != nil {
				return err
			}
			if pr.Data != nil {
				data = pr.Data
			}
			if pr.SkipHistory {
				pubRule = r.withoutHistory()
			}
		}
	}
	if !decided && !permitted(c.User(), r.AllowPublishForAnonymous, r.AllowPublishForClient, r.AllowPublishForSubscriber && s != nil) && !c.hub.client.Insecure {
		return newError(protocol.ErrorPermissionDenied)
	}
	var chanInfo []byte
	if s != nil {
		chanInfo = s.chanInfo
	}
	pub := &engine.Publication{Data: data, Info: c.clientInfo(chanInfo)}
	if _, err := c.hub.publish(ctx, req.Channel, pubRule, pub); err != nil {
		return err
	}
	c.queueReply(&protocol.Reply{Id: id, Publish: &protocol.PublishResult{}})
	return nil
}

// presenceCommand runs the checks presence and presence_stats share:
// presence on in the namespace (108), then permission (103), which the
// application's OnPresence decides when it has one.
func (c *Client) presenceCommand(ctx context.Context, ch string, stats bool) error {
	r, s, err := c.channelCommand(ch)
	if err != nil {
		return err
	}
	if !r.Presence {
		return newError(protocol.ErrorNotAvailable)
	}
	if fn := c.hub.cfg.Handlers.OnPresence; fn != nil {
		if err := fn(ctx, c, PresenceEvent{Channel: ch, Stats: stats}); !errors.Is(err, ErrUseDefault) {
			return err
		}
	}
	if !c.hasPresencePermission(r, s != nil) {
		return newError(protocol.ErrorPermissionDenied)
	}
	return nil
}

func (c *Client) handlePresence(ctx context.Context, id uint32, req *protocol.PresenceRequest) error {
	if err := c.presenceCommand(ctx, req.Channel, false); err != nil {
		return err
	}
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

func (c *Client) handlePresenceStats(ctx context.Context, id uint32, req *protocol.PresenceStatsRequest) error {
	if err := c.presenceCommand(ctx, req.Channel, true); err != nil {
		return err
	}
	st, err := c.hub.engine.PresenceStats(ctx, req.Channel)
	if err != nil {
		return err
	}
	c.queueReply(&protocol.Reply{Id: id, PresenceStats: &protocol.PresenceStatsResult{
		NumClients: uint32(st.NumClients), NumUsers: uint32(st.NumUsers),
	}})
	return nil
}

func (c *Client) handleHistory(ctx context.Context, id uint32, req *protocol.HistoryRequest) error {
	r, s, err := c.channelCommand(req.Channel)
	if err != nil {
		return err
	}
	if !r.HasHistory() {
		return newError(protocol.ErrorNotAvailable)
	}
	var since *engine.StreamPosition
	if req.Since != nil {
		since = &engine.StreamPosition{Offset: req.Since.Offset, Epoch: req.Since.Epoch}
	}
	decided := false
	if fn := c.hub.cfg.Handlers.OnHistory; fn != nil {
		ev := HistoryEvent{Channel: req.Channel, Since: since, Limit: int(req.Limit), Reverse: req.Reverse}
		err := fn(ctx, c, ev)
		if decided = !errors.Is(err, ErrUseDefault); decided && err != nil {
			return err
		}
	}
	if !decided && !c.hasHistoryPermission(r, s != nil) {
		return newError(protocol.ErrorPermissionDenied)
	}
	pubs, pos, err := c.hub.history(ctx, req.Channel, r, since, int(req.Limit), req.Reverse, c.hub.client.HistoryMaxPublicationLimit)
	if err != nil {
		return err
	}
	res := &protocol.HistoryResult{Epoch: pos.Epoch, Offset: pos.Offset, Publications: make([]*protocol.Publication, 0, len(pubs))}
	for _, p := range pubs {
		if !c.canDecode(p) {
			continue // as in delivery: see deliverLocked
		}
		res.Publications = append(res.Publications, protoPublication(p))
	}
	c.queueReply(&protocol.Reply{Id: id, History: res})
	return nil
}

func (c *Client) handleRPC(ctx context.Context, id uint32, req *protocol.RPCRequest) error {
	fn := c.hub.cfg.Handlers.OnRPC
	if fn == nil {
		return newError(protocol.ErrorNotAvailable)
	}
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
		if errors.Is(a.err, ErrUseDefault) {
			return newError(protocol.ErrorNotAvailable)
		}
		if a.err != nil {
			return a.err
		}
		c.queueReply(&protocol.Reply{Id: id, Rpc: &protocol.RPCResult{Data: a.r.Data}})
		return nil
	case <-ctx.Done():
		return fmt.Errorf("rpc %q: no reply: %w", req.Method, ctx.Err())
	}
}

func (c *Client) handleSend(ctx context.Context, req *protocol.SendRequest) error {
	fn := c.hub.cfg.Handlers.OnSend
	if fn == nil {
		return newDisconnect(protocol.DisconnectNotAvailable)
	}
	if err := fn(ctx, c, SendEvent{Data: req.Data}); errors.Is(err, ErrUseDefault) {
		return newDisconnect(protocol.DisconnectNotAvailable)
	} else if err != nil {
		var d *Disconnect
		if errors.As(err, &d) {
			return d
		}
		c.logger().Error("send handler", "error", err)
	}
	return nil
}

// handleRefresh renews an expiring connection: with a new connection
// token, or as the application's OnRefresh decides.
func (c *Client) handleRefresh(ctx context.Context, id uint32, req *protocol.RefreshRequest) error {
	rr, err := c.authorizeRefresh(ctx, req)
	if err != nil {
		return err
	}
	if rr.Expired {
		return newDisconnect(protocol.DisconnectExpired)
	}
	now := time.Now()
	if rr.ExpireAt > 0 && rr.ExpireAt <= now.Unix() {
		return newError(protocol.ErrorExpired)
	}
	c.mu.Lock()
	// A token without expiry makes the connection non-expiring.
	c.expireAt = rr.ExpireAt
	if rr.Info != nil {
		c.info = rr.Info
	}
	hubRefresh := c.hubRefresh
	if hubRefresh {
		c.refreshAt = refreshDeadline(rr.ExpireAt)
	}
	c.resetTimerLocked(now)
	c.mu.Unlock()
	// As the reference: expires and ttl only, no client or version.
	res := &protocol.RefreshResult{}
	// The hub renews a server-side refreshed connection: the client is
	// not told an expiry it would try to refresh itself.
	if rr.ExpireAt > 0 && !hubRefresh {
		res.Expires = true
		res.Ttl = uint32(rr.ExpireAt - now.Unix())
	}
	c.queueReply(&protocol.Reply{Id: id, Refresh: res})
	return nil
}

// authorizeRefresh asks the application's OnRefresh, or checks the new
// connection token: valid, and for the same user.
func (c *Client) authorizeRefresh(ctx context.Context, req *protocol.RefreshRequest) (RefreshReply, error) {
	h := c.hub
	if fn := h.cfg.Handlers.OnRefresh; fn != nil {
		if rr, err := fn(ctx, c, RefreshEvent{Token: req.Token}); !errors.Is(err, ErrUseDefault) {
			return rr, err
		}
	}
	if req.Token == "" {
		return RefreshReply{}, newDisconnect(protocol.DisconnectBadRequest)
	}
	if h.cfg.Tokens == nil {
		return RefreshReply{}, newDisconnect(protocol.DisconnectInvalidToken)
	}
	tok, err := h.cfg.Tokens.VerifyConnectToken(req.Token)
	if err != nil {
		if errors.Is(err, auth.ErrTokenExpired) {
			return RefreshReply{}, newDisconnect(protocol.DisconnectExpired)
		}
		c.logger().Info("invalid refresh token", "error", err)
		return RefreshReply{}, newDisconnect(protocol.DisconnectInvalidToken)
	}
	if tok.User != c.User() {
		c.logger().Info("refresh token for another user")
		return RefreshReply{}, newDisconnect(protocol.DisconnectInvalidToken)
	}
	return RefreshReply{ExpireAt: tok.ExpireAt, Info: tok.Info}, nil
}

// handleSubRefresh renews an expiring subscription: with a new
// subscription token, or as the application's OnSubRefresh decides.
func (c *Client) handleSubRefresh(ctx context.Context, id uint32, req *protocol.SubRefreshRequest) error {
	if req.Channel == "" {
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	c.mu.Lock()
	s := c.subs[req.Channel]
	c.mu.Unlock()
	if s == nil {
		return newError(protocol.ErrorPermissionDenied)
	}
	rr, err := c.authorizeSubRefresh(ctx, req)
	if err != nil {
		return err
	}
	if rr.Expired {
		c.unsubscribeIf(req.Channel, s, protocol.UnsubscribeExpired)
		return nil
	}
	now := time.Now()
	if rr.ExpireAt > 0 && rr.ExpireAt <= now.Unix() {
		return newError(protocol.ErrorExpired)
	}
	c.mu.Lock()
	s.expireAt = rr.ExpireAt
	if rr.Info != nil {
		s.chanInfo = rr.Info
	}
	hubRefresh := s.hubRefresh
	if hubRefresh {
		s.refreshAt = refreshDeadline(rr.ExpireAt)
	}
	c.resetTimerLocked(now)
	c.mu.Unlock()
	res := &protocol.SubRefreshResult{}
	if rr.ExpireAt > 0 && !hubRefresh {
		res.Expires = true
		res.Ttl = uint32(rr.ExpireAt - now.Unix())
	}
	c.queueReply(&protocol.Reply{Id: id, SubRefresh: res})
	return nil
}

// authorizeSubRefresh asks the application's OnSubRefresh, or checks the
// new subscription token: valid, and for the same channel, user and
// client.
func (c *Client) authorizeSubRefresh(ctx context.Context, req *protocol.SubRefreshRequest) (SubRefreshReply, error) {
	h := c.hub
	if fn := h.cfg.Handlers.OnSubRefresh; fn != nil {
		if rr, err := fn(ctx, c, SubRefreshEvent{Channel: req.Channel, Token: req.Token}); !errors.Is(err, ErrUseDefault) {
			return rr, err
		}
	}
	if req.Token == "" {
		return SubRefreshReply{}, newError(protocol.ErrorBadRequest)
	}
	if h.cfg.Tokens == nil {
		return SubRefreshReply{}, newDisconnect(protocol.DisconnectInvalidToken)
	}
	tok, err := h.cfg.Tokens.VerifySubscribeToken(req.Token)
	if err != nil {
		if errors.Is(err, auth.ErrTokenExpired) {
			return SubRefreshReply{}, newError(protocol.ErrorExpired)
		}
		c.logger().Info("invalid subscription refresh token", "channel", req.Channel, "error", err)
		return SubRefreshReply{}, newDisconnect(protocol.DisconnectInvalidToken)
	}
	if tok.Channel != req.Channel || tok.User != c.User() || (tok.Client != "" && tok.Client != c.id) {
		return SubRefreshReply{}, newDisconnect(protocol.DisconnectInvalidToken)
	}
	return SubRefreshReply{ExpireAt: tok.ExpireAt, Info: tok.Info}, nil
}
