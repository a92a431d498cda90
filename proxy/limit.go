package proxy

import "sync/atomic"

// DefaultMaxInFlight is the node-wide bound on proxy calls in flight when
// none is configured.
const DefaultMaxInFlight = 1000

// limiter bounds the calls in flight on this node, across all endpoints:
// the backend is protected during a reconnect storm, and the excess is
// refused at once (the client retries with backoff) rather than queued
// behind calls that may time out.
type limiter struct {
	max int64 // <= 0: no bound
	n   atomic.Int64
}

func (l *limiter) acquire() bool {
	if l.n.Add(1) > l.max && l.max > 0 {
		l.n.Add(-1)
		return false
	}
	return true
}

func (l *limiter) release() { l.n.Add(-1) }
