package hub

import (
	"context"
	"errors"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// serverRefreshRetry is how long after a failed server-side refresh the
// hub tries again; the connection stays open until its expiry plus
// ClientConfig.ExpiredCloseDelay.
const serverRefreshRetry = 5 * time.Second

// refreshServerSide renews an expired connection through OnRefresh, on
// the client's command goroutine (a slow backend holds up this client
// only). Expired, or an expiry already past, closes it with 3005; a
// failure is retried.
func (c *Client) refreshServerSide(ctx context.Context) {
	fn := c.hub.cfg.Handlers.OnRefresh
	if fn == nil {
		c.close(newDisconnect(protocol.DisconnectExpired))
		return
	}
	rr, err := fn(ctx, c, RefreshEvent{ServerSide: true})
	if errors.Is(err, ErrUseDefault) {
		// There is no token to check: nothing renews the connection.
		rr, err = RefreshReply{Expired: true}, nil
	}
	now := time.Now()
	if err != nil {
		var d *Disconnect
		if errors.As(err, &d) {
			c.close(d)
			return
		}
		c.logger().Warn("server-side refresh failed, will retry", "error", err)
		c.mu.Lock()
		if c.state == stateConnected {
			c.refreshAt = now.Add(serverRefreshRetry).UnixNano()
			c.resetTimerLocked(now)
		}
		c.mu.Unlock()
		return
	}
	if rr.Expired || (rr.ExpireAt > 0 && rr.ExpireAt <= now.Unix()) {
		c.close(newDisconnect(protocol.DisconnectExpired))
		return
	}
	c.mu.Lock()
	if c.state == stateConnected {
		c.expireAt = rr.ExpireAt
		if rr.Info != nil {
			c.info = rr.Info
		}
		c.refreshAt = refreshDeadline(rr.ExpireAt)
		c.resetTimerLocked(now)
	}
	c.mu.Unlock()
}

// refreshSubServerSide renews an expired subscription through
// OnSubRefresh, on the client's command goroutine. Expired, or an expiry
// already past, unsubscribes the client with 2501; a failure is retried.
func (c *Client) refreshSubServerSide(ctx context.Context, s *subscription) {
	fn := c.hub.cfg.Handlers.OnSubRefresh
	var rr SubRefreshReply
	var err error
	if fn == nil {
		rr.Expired = true
	} else if rr, err = fn(ctx, c, SubRefreshEvent{Channel: s.channel, ServerSide: true}); errors.Is(err, ErrUseDefault) {
		rr, err = SubRefreshReply{Expired: true}, nil
	}
	now := time.Now()
	if err != nil {
		var d *Disconnect
		if errors.As(err, &d) {
			c.close(d)
			return
		}
		c.logger().Warn("server-side subscription refresh failed, will retry", "channel", s.channel, "error", err)
		c.mu.Lock()
		if s.active {
			s.refreshAt = now.Add(serverRefreshRetry).UnixNano()
			c.resetTimerLocked(now)
		}
		c.mu.Unlock()
		return
	}
	if rr.Expired || (rr.ExpireAt > 0 && rr.ExpireAt <= now.Unix()) {
		c.unsubscribeIf(s.channel, s, protocol.UnsubscribeExpired)
		return
	}
	c.mu.Lock()
	if s.active {
		s.expireAt = rr.ExpireAt
		if rr.Info != nil {
			s.chanInfo = rr.Info
		}
		s.refreshAt = refreshDeadline(rr.ExpireAt)
		c.resetTimerLocked(now)
	}
	c.mu.Unlock()
}

// refreshDeadline is when a server-side refreshed session expiring at
// expireAt (Unix seconds; 0 never) is refreshed again, in Unix
// nanoseconds; 0 means never.
func refreshDeadline(expireAt int64) int64 {
	if expireAt <= 0 {
		return 0
	}
	return time.Unix(expireAt, 0).UnixNano()
}
