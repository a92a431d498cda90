package hub

import (
	"context"
	"errors"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub/internal/access"
	"github.com/heraldhq/herald/protocol"
)

// Refresh renews an expiring connection (the refresh command, OnRefresh)
// or subscription (sub_refresh, OnSubRefresh). Both work the same way and
// are written once here, on the connection's or the subscription's
// expiry: renewed by the client with a new token or by the application's
// handler, or by the hub itself when the grant asked for server-side
// refresh, or by the server API (command_serverside.go).

// serverRefreshRetry is how long after a failed server-side refresh the
// hub tries again; the connection or subscription stays until its expiry
// plus ClientConfig.ExpiredCloseDelay (ExpiredSubCloseDelay).
const serverRefreshRetry = 5 * time.Second

// expiry is when a connection or a subscription expires, and whether the
// hub renews it itself. It is guarded by the client's mutex.
type expiry struct {
	expireAt int64 // Unix seconds; 0 never
	// refreshAt is when the hub renews a server-side refreshed grant, in
	// Unix nanoseconds; 0 while a refresh runs or when none is due.
	refreshAt int64
	// hubRefresh: the hub renews it through OnRefresh or OnSubRefresh
	// (ConnectReply.ServerSideRefresh, SubscribeReply.ServerSideRefresh)
	// instead of telling the client when it expires.
	hubRefresh bool
}

func newExpiry(expireAt int64, hubRefresh bool) expiry {
	e := expiry{expireAt: expireAt, hubRefresh: hubRefresh}
	if hubRefresh {
		e.refreshAt = refreshDeadline(expireAt)
	}
	return e
}

// refreshDeadline is when a server-side refreshed grant expiring at
// expireAt (Unix seconds; 0 never) is refreshed again, in Unix
// nanoseconds; 0 means never.
func refreshDeadline(expireAt int64) int64 {
	if expireAt <= 0 {
		return 0
	}
	return time.Unix(expireAt, 0).UnixNano()
}

// endAt is when the grant, once expired, is ended, in Unix nanoseconds:
// its expiry plus grace (ClientConfig.ExpiredCloseDelay or
// ExpiredSubCloseDelay, the time the client has to refresh it); 0 never.
func (e *expiry) endAt(grace time.Duration) int64 {
	if e.expireAt <= 0 {
		return 0
	}
	return time.Unix(e.expireAt, 0).Add(grace).UnixNano()
}

// takeRefresh reports whether a server-side refresh is due at nowNs, and
// if so marks it as running: none is due again until it is done.
func (e *expiry) takeRefresh(nowNs int64) bool {
	if e.refreshAt == 0 || nowNs < e.refreshAt {
		return false
	}
	e.refreshAt = 0
	return true
}

// ttl is what a reply tells the client about the expiry: whether it
// expires, and the seconds left. A grant without expiry, or one the hub
// renews, does not expire as far as the client knows.
func (e *expiry) ttl(now time.Time) (expires bool, ttl uint32) {
	if e.expireAt <= 0 || e.hubRefresh {
		return false, 0
	}
	return true, uint32(max(e.expireAt-now.Unix(), 0))
}

// expiryLocked is the expiry of the connection (s nil) or of s, and the
// info a refresh may replace with it; nil when it is gone.
func (c *Client) expiryLocked(s *subscription) (*expiry, *[]byte) {
	switch {
	case c.state != stateConnected:
		return nil, nil
	case s == nil:
		return &c.expiry, &c.info
	case s.active:
		return &s.expiry, &s.chanInfo
	}
	return nil, nil
}

// renewLocked applies a refresh that did not expire the connection (s
// nil) or s: the new expiry (0: never), the new info when there is one,
// and the next server-side refresh. It returns the renewed expiry, nil
// when the connection or subscription is gone.
func (c *Client) renewLocked(s *subscription, rr RefreshReply, now time.Time) *expiry {
	e, info := c.expiryLocked(s)
	if e == nil {
		return nil
	}
	e.expireAt = rr.ExpireAt
	if rr.Info != nil {
		*info = rr.Info
	}
	if s == nil && (rr.Caps != nil || rr.setCaps) {
		c.setCapsLocked(rr.Caps)
	}
	if s != nil && rr.allow != nil {
		s.allow = *rr.allow
	}
	if e.hubRefresh {
		e.refreshAt = refreshDeadline(rr.ExpireAt)
	}
	c.resetTimerLocked(now)
	return e
}

// expire ends what a refresh found expired: the connection (s nil) is
// closed with 3005, a subscription unsubscribed with 2501.
func (c *Client) expire(s *subscription) {
	if s == nil {
		c.close(newDisconnect(protocol.DisconnectExpired))
		return
	}
	c.unsubscribeIf(s.channel, s, protocol.UnsubscribeExpired)
}

// renew applies a verdict on a client's refresh (s nil) or sub_refresh
// command and returns the expiry its reply tells the client. An expiry
// already past answers error 109 (expired).
func (c *Client) renew(s *subscription, rr RefreshReply) (expires bool, ttl uint32, err error) {
	now := time.Now()
	if rr.ExpireAt > 0 && rr.ExpireAt <= now.Unix() {
		return false, 0, newError(protocol.ErrorExpired)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.renewLocked(s, rr, now); e != nil {
		expires, ttl = e.ttl(now)
	}
	return expires, ttl, nil
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
	expires, ttl, err := c.renew(nil, rr)
	if err != nil {
		return err
	}
	if rr.Caps != nil || rr.setCaps {
		c.dropUncapped()
	}
	// As the reference: expires and ttl only, no client or version.
	c.queueReply(&protocol.Reply{Id: id, Refresh: &protocol.RefreshResult{Expires: expires, Ttl: ttl}})
	return nil
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
	if req.Type != 0 {
		return c.handlePollRefresh(id, req) // track or untrack keys (sharedpoll_client.go)
	}
	rr, err := c.authorizeSubRefresh(ctx, req)
	if err != nil {
		return err
	}
	if rr.Expired {
		c.expire(s)
		return nil
	}
	expires, ttl, err := c.renew(s, rr)
	if err != nil {
		return err
	}
	c.queueReply(&protocol.Reply{Id: id, SubRefresh: &protocol.SubRefreshResult{Expires: expires, Ttl: ttl}})
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
		if d := invalidCapsDisconnect(err); d != nil {
			return RefreshReply{}, d
		}
		return RefreshReply{}, newDisconnect(protocol.DisconnectInvalidToken)
	}
	if tok.User != c.User() {
		c.logger().Info("refresh token for another user")
		return RefreshReply{}, newDisconnect(protocol.DisconnectInvalidToken)
	}
	mark := access.Token{User: tok.User, ID: tok.ID, IssuedAt: tok.IssuedAt}
	if v := h.access.CheckConnection(mark, time.Now()); v != access.Allowed {
		if v == access.Blocked {
			return RefreshReply{}, blockedDisconnect()
		}
		// A revoked token refreshes nothing: the SDK asks for another.
		return RefreshReply{}, newDisconnect(protocol.DisconnectExpired)
	}
	c.mu.Lock()
	c.setTokenLocked(mark)
	c.mu.Unlock()
	// A new token's caps are the connection's from now on, none if it has
	// none.
	return RefreshReply{ExpireAt: tok.ExpireAt, Info: tok.Info, Caps: tok.Caps, setCaps: true}, nil
}

// authorizeSubRefresh asks the application's OnSubRefresh, or checks the
// new subscription token: valid, and for the same channel, user and
// client.
func (c *Client) authorizeSubRefresh(ctx context.Context, req *protocol.SubRefreshRequest) (RefreshReply, error) {
	h := c.hub
	if fn := h.cfg.Handlers.OnSubRefresh; fn != nil {
		if rr, err := fn(ctx, c, SubRefreshEvent{Channel: req.Channel, Token: req.Token}); !errors.Is(err, ErrUseDefault) {
			return rr.refreshReply(), err
		}
	}
	if req.Token == "" {
		return RefreshReply{}, newError(protocol.ErrorBadRequest)
	}
	if h.cfg.Tokens == nil {
		return RefreshReply{}, newDisconnect(protocol.DisconnectInvalidToken)
	}
	tok, err := h.cfg.Tokens.VerifySubscribeToken(req.Token)
	if err != nil {
		if errors.Is(err, auth.ErrTokenExpired) {
			return RefreshReply{}, newError(protocol.ErrorExpired)
		}
		c.logger().Info("invalid subscription refresh token", "channel", req.Channel, "error", err)
		return RefreshReply{}, newDisconnect(protocol.DisconnectInvalidToken)
	}
	if !c.ownsSubscribeToken(tok, req.Channel) {
		return RefreshReply{}, newDisconnect(protocol.DisconnectInvalidToken)
	}
	return RefreshReply{ExpireAt: tok.ExpireAt, Info: tok.Info, allow: &tok.Allow}, nil
}

// refreshServerSide renews the expiring connection (s nil) or s through
// OnRefresh or OnSubRefresh, on the client's command goroutine (a slow
// backend holds up this client only). Expired, or an expiry already past,
// ends it (3005 or 2501); a failure is retried after serverRefreshRetry;
// a *Disconnect closes the connection.
func (c *Client) refreshServerSide(ctx context.Context, s *subscription) {
	rr, err := c.askServerSideRefresh(ctx, s)
	now := time.Now()
	if err != nil {
		var d *Disconnect
		if errors.As(err, &d) {
			c.close(d)
			return
		}
		if s == nil {
			c.logger().Warn("server-side refresh failed, will retry", "error", err)
		} else {
			c.logger().Warn("server-side subscription refresh failed, will retry", "channel", s.channel, "error", err)
		}
		c.mu.Lock()
		if e, _ := c.expiryLocked(s); e != nil {
			e.refreshAt = now.Add(serverRefreshRetry).UnixNano()
			c.resetTimerLocked(now)
		}
		c.mu.Unlock()
		return
	}
	if rr.Expired || (rr.ExpireAt > 0 && rr.ExpireAt <= now.Unix()) {
		c.expire(s)
		return
	}
	c.mu.Lock()
	c.renewLocked(s, rr, now)
	c.mu.Unlock()
	if s == nil && rr.Caps != nil {
		c.dropUncapped()
	}
}

// refreshReply is r as the refresh both kinds of refresh share.
func (r SubRefreshReply) refreshReply() RefreshReply {
	return RefreshReply{Expired: r.Expired, ExpireAt: r.ExpireAt, Info: r.Info, allow: r.Allow}
}

// askServerSideRefresh asks OnRefresh (s nil) or OnSubRefresh about a
// server-side refresh. Without the handler, or when it answers
// ErrUseDefault, there is no token to check: nothing renews the grant, and
// it expires.
func (c *Client) askServerSideRefresh(ctx context.Context, s *subscription) (RefreshReply, error) {
	var rr RefreshReply
	err := ErrUseDefault
	if fn := c.hub.cfg.Handlers.OnRefresh; s == nil && fn != nil {
		rr, err = fn(ctx, c, RefreshEvent{ServerSide: true})
	} else if fn := c.hub.cfg.Handlers.OnSubRefresh; s != nil && fn != nil {
		var sr SubRefreshReply
		sr, err = fn(ctx, c, SubRefreshEvent{Channel: s.channel, ServerSide: true})
		rr = sr.refreshReply()
	}
	if errors.Is(err, ErrUseDefault) {
		return RefreshReply{Expired: true}, nil
	}
	return rr, err
}
