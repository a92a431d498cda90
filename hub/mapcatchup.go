package hub

import (
	"time"

	"github.com/heraldhq/herald/protocol"
)

// A map subscriber catches up before going live: it reads the state page
// by page, then the change stream from the position of the first state
// page, and goes live when at most a page of changes is left
// (subscription_map.go). centrifuge v0.40.1 bounds two things of that
// catch-up, which MapOptions carries under Centrifugo's names:
//
//   - LiveTransitionMaxPublicationLimit: how many changes the transition
//     to live may recover, those left plus those made meanwhile; more is
//     error 112 (client_map.go:896-966, handleMapTransitionToLive; zero is
//     MaxPageSize, a negative number no bound). Herald's transition is the
//     recovery of startSubscription, which reads at most this many.
//   - SubscribeCatchUpTimeout: how long the requests of one flow may take,
//     from its first to the one that goes live; a request after it closes
//     the connection with DisconnectSlow (client_map.go:320-347 and
//     isMapCatchUpExpired, 1696-1706). Centrifugo's zero is 5 s; Herald's
//     zero is no bound, its behaviour before the option, and the importer
//     writes Centrifugo's 5 s for Centrifugo files.
//
// Herald's flow is otherwise stateless (each request is authorized and
// answered on its own), so the start of each flow not yet live is the
// only state it keeps, in rareState, and only with a timeout set.

// liveTransitionLimit is the history limit of the recovery that makes a
// map subscriber live (engine.HistoryRequest.Limit: -1 is every change).
func (o MapOptions) liveTransitionLimit() int {
	switch n := o.LiveTransitionMaxPublicationLimit; {
	case n < 0:
		return -1
	case n > 0:
		return n
	}
	return orDefault(o.MaxPageSize, defaultMapMaxPageSize)
}

// checkMapCatchUp records the start of a map subscribe flow (a first
// state page, or any request of a channel with no flow recorded: a
// recovering subscriber starts at the stream), and closes the connection
// with DisconnectSlow when a later request of the flow comes after the
// namespace's SubscribeCatchUpTimeout.
func (c *Client) checkMapCatchUp(ch string, r *rule, req *protocol.SubscribeRequest) error {
	timeout := r.Map.SubscribeCatchUpTimeout
	if timeout <= 0 {
		return nil
	}
	now := time.Now().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	rs := c.rareLocked()
	started, ok := rs.mapCatchUps[ch]
	if !ok || req.Phase == phaseState && req.Cursor == "" {
		if rs.mapCatchUps == nil {
			rs.mapCatchUps = make(map[string]int64)
		}
		// Flows the client left unfinished and that timed out are
		// forgotten once they are as many as its subscriptions may be,
		// so abandoned ones do not pile up (a well-behaved client has no
		// more flows at once than subscriptions).
		if len(rs.mapCatchUps) >= c.hub.client.ChannelLimit {
			for other, at := range rs.mapCatchUps {
				if time.Duration(now-at) > timeout {
					delete(rs.mapCatchUps, other)
				}
			}
		}
		rs.mapCatchUps[ch] = now
		return nil
	}
	if time.Duration(now-started) > timeout {
		delete(rs.mapCatchUps, ch)
		c.logger().Info("map subscribe catch-up timeout", "channel", ch, "timeout", timeout)
		return newDisconnect(protocol.DisconnectSlow)
	}
	return nil
}

// endMapCatchUp forgets the flow of a channel that went live.
func (c *Client) endMapCatchUp(ch string) {
	c.mu.Lock()
	if c.rare != nil {
		delete(c.rare.mapCatchUps, ch)
	}
	c.mu.Unlock()
}
