package hub

import (
	"context"
	"fmt"

	"github.com/heraldhq/herald/protocol"
)

// PersonalChannelOptions is Centrifugo's
// client.subscribe_to_user_personal_channel (centrifugo v6.9.1
// internal/client/handler.go OnConnecting, internal/config/container.go
// PersonalChannel): each connection of an authenticated user is
// subscribed, server-side, to the channel "#user" (or "namespace:#user"),
// which only that user may join, so a backend reaches every connection of
// a user by publishing there.
type PersonalChannelOptions struct {
	Enabled bool `yaml:"enabled" doc:"subscribe every connection of an authenticated user (not anonymous ones) to the user's personal channel, '#' followed by the user id, server-side at connect (it comes in the connect reply's 'subs'); the channel's namespace must exist"`
	// Namespace prefixes the personal channel ("ns:#user"); empty: the
	// channels without namespace.
	Namespace string `yaml:"personal_channel_namespace" doc:"the namespace of personal channels ('ns' gives 'ns:#user'); empty: no namespace, '#user'"`
	// SingleConnection keeps one connection per user: a new connection
	// closes the user's others, on every node, with 3504. As Centrifugo,
	// it finds them by the personal channel's presence, which the
	// namespace must therefore keep.
	SingleConnection bool `yaml:"single_connection" doc:"keep one connection per user: when the user's personal channel already has presence, a new connection closes the user's other connections on every node with 3504 (connection limit). Needs 'presence: true' in the personal channel's namespace"`
}

// channel is user's personal channel, in the channel syntax syn
// (defaults applied): "#user", or "ns:#user" with a namespace.
func (p PersonalChannelOptions) channel(syn ChannelSyntax, user string) string {
	name := syn.UserBoundary + user
	if p.Namespace == "" {
		return name
	}
	return p.Namespace + syn.NamespaceBoundary + name
}

// Validate checks the options against the channels they use, as New does:
// the personal channels' namespace must exist, and keep presence for
// SingleConnection. Problems name the Go fields under
// SubscribeToUserPersonalChannel.
func (p PersonalChannelOptions) Validate(channels ChannelConfig) error {
	var ps optionProblems
	p.check(channels, "SubscribeToUserPersonalChannel", &ps)
	return ps.err()
}

func (p PersonalChannelOptions) check(channels ChannelConfig, field string, ps *optionProblems) {
	if !p.Enabled {
		return
	}
	ns, found := channels.WithoutNamespace, p.Namespace == ""
	for _, n := range channels.Namespaces {
		if n.Name == p.Namespace {
			ns, found = n.NamespaceOptions, true
		}
	}
	switch {
	case !found:
		ps.add(field, "Namespace", fmt.Sprintf("%q: no such namespace in the channel options", p.Namespace))
	case p.SingleConnection && !ns.Presence:
		ps.add(field, "SingleConnection", fmt.Sprintf("needs presence in the personal channels' namespace (%s), where it finds the user's connections", namespaceLabel(p.Namespace)))
	}
}

func namespaceLabel(ns string) string {
	if ns == "" {
		return "the channels without namespace"
	}
	return fmt.Sprintf("%q", ns)
}

// personalChannel is the channel the client of user is subscribed to at
// connect, "" when none (the feature is off, or the user is anonymous).
func (h *Hub) personalChannel(user string) string {
	if !h.client.SubscribeToUserPersonalChannel.Enabled || user == "" {
		return ""
	}
	return h.client.SubscribeToUserPersonalChannel.channel(h.channels.syntax, user)
}

// enforceSingleConnection closes the other connections of user, on every
// node, when its personal channel shows one, as Centrifugo does before it
// accepts the new connection; failing to tell is a server error, since
// letting the connection in would break the promise of one.
func (c *Client) enforceSingleConnection(ctx context.Context, user string) error {
	h := c.hub
	ch := h.personalChannel(user)
	if ch == "" || !h.client.SubscribeToUserPersonalChannel.SingleConnection {
		return nil
	}
	st, err := h.engine.PresenceStats(ctx, ch)
	if err != nil {
		c.logger().Error("single connection: presence stats of the personal channel", "channel", ch, "error", err)
		return newDisconnect(protocol.DisconnectServerError)
	}
	if st.NumClients == 0 {
		return nil
	}
	d := protocol.DisconnectConnectionLimit
	if err := h.DisconnectUser(ctx, user, "", []string{c.id}, uint32(d), d.Reason()); err != nil {
		c.logger().Error("single connection: disconnect the user's other connections", "user", user, "error", err)
		return newDisconnect(protocol.DisconnectServerError)
	}
	return nil
}
