package hub

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// Each client has one runtime timer (no goroutine) set to its earliest
// pending deadline: the stale close before connect, the next ping, the pong
// deadline, and connection and subscription expiry.

// timers are the client's runtime timer and its deadlines, in Unix
// nanoseconds; 0 means not pending. Expiry deadlines are in expiry
// (lifecycle_refresh.go).
type timers struct {
	timer        *time.Timer
	staleAt      int64
	nextPing     int64
	pongDeadline int64
}

func (c *Client) startTimer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateClosed {
		return
	}
	c.timer = time.AfterFunc(time.Until(time.Unix(0, c.staleAt)), c.onTimer)
}

// firstPingDelay spreads pings of clients that connected together: the first
// ping comes at a random point between half the interval and the interval.
func firstPingDelay(interval time.Duration) time.Duration {
	return interval/2 + rand.N(interval/2+1)
}

func (c *Client) onTimer() {
	h := c.hub
	now := time.Now()
	nowNs := now.UnixNano()
	var expired []*subscription
	var refresh bool
	var subRefresh []*subscription

	c.mu.Lock()
	if c.holdUntil != 0 && nowNs >= c.holdUntil {
		// Commands are taking long: write what they queued so far.
		c.releaseHoldLocked()
	}
	switch c.state {
	case stateClosed:
		c.mu.Unlock()
		return
	case stateConnecting:
		if nowNs >= c.staleAt {
			c.mu.Unlock()
			c.logger().Info("closing stale connection: no connect command in time")
			c.close(newDisconnect(protocol.DisconnectStale))
			return
		}
	case stateConnected:
		if c.pongDeadline != 0 && nowNs >= c.pongDeadline && c.pongDueLocked(nowNs) {
			c.mu.Unlock()
			c.logger().Info("no pong in time")
			c.close(newDisconnect(protocol.DisconnectNoPong))
			return
		}
		refresh = c.takeRefresh(nowNs)
		if end := c.endAt(h.client.ExpiredCloseDelay); end != 0 && nowNs >= end {
			c.mu.Unlock()
			c.close(newDisconnect(protocol.DisconnectExpired))
			return
		}
		if nowNs >= c.nextPing {
			// No new ping while a pong is outstanding (its deadline moved
			// for a client that is behind, lifecycle_pong.go): the client
			// would answer both, and the second pong is a protocol error.
			if c.pongDeadline == 0 {
				msg, _ := c.encodeReply(&protocol.Reply{})
				c.enqueueLocked(msg)
				h.metrics.sent["ping"].Inc()
				if !c.conn.Unidirectional {
					c.pongDeadline = nowNs + int64(h.client.PongTimeout)
				}
			}
			c.nextPing = nowNs + int64(h.client.PingInterval)
		}
		for _, s := range c.subs {
			if s.takeRefresh(nowNs) {
				subRefresh = append(subRefresh, s)
			}
			if end := s.endAt(h.client.ExpiredSubCloseDelay); end != 0 && nowNs >= end {
				expired = append(expired, s)
			}
		}
	}
	c.resetTimerLocked(now)
	c.mu.Unlock()

	if refresh {
		c.runServerTask(func(ctx context.Context) { c.refreshServerSide(ctx, nil) })
	}
	for _, s := range subRefresh {
		c.runServerTask(func(ctx context.Context) { c.refreshServerSide(ctx, s) })
	}
	for _, s := range expired {
		c.unsubscribeIf(s.channel, s, protocol.UnsubscribeExpired)
	}
}

// resetTimerLocked points the timer at the earliest pending deadline.
func (c *Client) resetTimerLocked(now time.Time) {
	if c.timer == nil || c.state == stateClosed {
		return
	}
	next := int64(0)
	earliest := func(t int64) {
		if t > 0 && (next == 0 || t < next) {
			next = t
		}
	}
	h := c.hub
	earliest(c.holdUntil)
	if c.state == stateConnecting {
		earliest(c.staleAt)
	} else {
		earliest(c.nextPing)
		earliest(c.pongDeadline)
		earliest(c.refreshAt)
		earliest(c.endAt(h.client.ExpiredCloseDelay))
		for _, s := range c.subs {
			earliest(s.refreshAt)
			earliest(s.endAt(h.client.ExpiredSubCloseDelay))
		}
	}
	if next == 0 {
		return
	}
	d := time.Duration(next - now.UnixNano())
	if d < time.Millisecond {
		d = time.Millisecond
	}
	c.timer.Reset(d)
}

// handlePongLocked accepts the client's answer to a ping. A pong with no ping
// outstanding is a protocol error, as in the reference server.
func (c *Client) handlePongLocked() *Disconnect {
	if c.state != stateConnected || c.pongDeadline == 0 {
		c.hub.log.Info("unexpected pong", "client", c.id)
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	c.pongDeadline, c.pongBehind = 0, false
	return nil
}
