package hub

import (
	"context"

	"github.com/heraldhq/herald/protocol"
)

// State invalidation: the server tells clients that what they cached (a
// token, a subscription's stream position, a map's state) is no longer
// valid. A connection is closed with 3014 "state invalidated", on which
// the SDKs drop the connection token and every subscription's position
// and state, then reconnect; a subscription is unsubscribed with 2502,
// on which they drop that subscription's token, position and state, then
// subscribe again. Codes and client behaviour: centrifugal/centrifuge
// v0.40.1 (disconnect.go, unsubscribe.go) and centrifuge-go's newest
// commit (client.go invalidateConnectionState, subscription.go
// invalidateState); centrifuge-js handles both the same way. Centrifugo
// 6.9.1 has no API for it: InvalidateState is the server API method
// invalidate_state (api/invalidate.go).

// controlInvalidate invalidates the state of a user's connections, or of
// a channel's subscriptions (every subscriber's when User, Client and
// Session are empty).
type controlInvalidate struct {
	User    string `json:"user,omitempty"`
	Channel string `json:"channel,omitempty"`
	Client  string `json:"client,omitempty"`
	Session string `json:"session,omitempty"`
}

// InvalidateState makes clients drop what they cached, on every node:
// without ch, the connections of user (or only its connection client, or
// the one with session) are closed with 3014; with ch, their
// subscriptions to ch are ended with the unsubscribe push 2502, and with
// ch alone (user, client and session empty) every subscriber's is.
// A server-side subscription cannot be resubscribed by the client, so its
// connection is closed with 3014 instead.
func (h *Hub) InvalidateState(ctx context.Context, user, ch, client, session string) error {
	return h.sendControl(ctx, controlMessage{Invalidate: &controlInvalidate{
		User: user, Channel: ch, Client: client, Session: session,
	}})
}

// invalidateLocal applies an invalidation to this node's clients.
func (h *Hub) invalidateLocal(m *controlInvalidate) {
	if m.Channel == "" {
		for _, c := range h.users.clients(m.User) {
			if c.targeted(m.Client, m.Session) {
				go c.close(newDisconnect(protocol.DisconnectStateInvalidated))
			}
		}
		return
	}
	var clients []*Client
	if m.User == "" && m.Client == "" && m.Session == "" {
		h.subs.each(m.Channel, func(c *Client, _ *subscription) { clients = append(clients, c) })
	} else {
		for _, c := range h.users.clients(m.User) {
			if c.targeted(m.Client, m.Session) {
				clients = append(clients, c)
			}
		}
	}
	ch := m.Channel
	for _, c := range clients {
		c.runServerTask(func(context.Context) { c.unsubscribeIf(ch, nil, protocol.UnsubscribeStateInvalidated) })
	}
}
