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
		c.refreshAt = 0
		if rr.ExpireAt > 0 {
			c.refreshAt = time.Unix(rr.ExpireAt, 0).UnixNano()
		}
		c.resetTimerLocked(now)
	}
	c.mu.Unlock()
}
