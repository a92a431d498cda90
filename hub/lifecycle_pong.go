package hub

import "time"

// A ping is queued behind whatever the client has not yet taken. A client
// that reads but is far behind (the node published faster than it reads,
// or its own process got no CPU for a while) receives the ping late and
// answers late, through no fault of its own: with the pong deadline counted
// from the ping's enqueueing, bench/overload.sh at twice the node's
// capacity had 11 of 500 reading subscribers closed with 3012 "no pong".
// So when the deadline passes while the ping may still be on its way and
// the client is taking bytes, the deadline moves on (pongRecheck); once the
// client is no longer behind, it gets a whole PongTimeout from then to
// answer. A client that takes nothing is closed at the deadline as before;
// one that reads but never catches up is bounded by the queue limits
// (slowLocked) and the transport's write timeout, not by the pong.

// pongRecheck is how often a deadline postponed for a client that is
// behind is looked at again: a share of the timeout, so that the client
// gets most of a PongTimeout once it has caught up.
func pongRecheck(timeout time.Duration) time.Duration { return max(timeout/4, time.Millisecond) }

// pongDueLocked reports, at the pong deadline, whether the client is to be
// closed for no pong; if not, it has moved the deadline.
func (c *Client) pongDueLocked(nowNs int64) bool {
	timeout := c.hub.client.PongTimeout
	if c.pingMayBeInFlightLocked(timeout) {
		c.pongBehind = true
		c.pongDeadline = nowNs + int64(pongRecheck(timeout))
		return false
	}
	if c.pongBehind {
		// It caught up since the last look: the ping reached it at some
		// point in between; a whole timeout from now covers it.
		c.pongBehind = false
		c.pongDeadline = nowNs + int64(timeout)
		return false
	}
	return true
}

// pingMayBeInFlightLocked reports whether the last ping may not have
// reached a client that is still reading: bytes wait in its queue, a write
// to it is in progress, or its socket holds bytes it has not acknowledged
// (SendQueueReporter); and, where the transport counts what the client
// takes (DeliveryReporter), it took some within the last timeout. Without
// that count a client whose writes wait is left to the transport's write
// timeout.
func (c *Client) pingMayBeInFlightLocked(timeout time.Duration) bool {
	behind := len(c.queue) > 0 || c.writing
	if !behind {
		if r, ok := c.transport.(SendQueueReporter); ok {
			n, known := r.Unacknowledged()
			behind = known && n > 0
		}
	}
	if !behind {
		return false
	}
	if _, ok := c.transport.(DeliveryReporter); !ok {
		return true
	}
	return c.takingLocked(c.hub.mono(), 0, timeout)
}
