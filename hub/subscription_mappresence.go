package hub

import (
	"context"
	"errors"

	"github.com/heraldhq/herald/engine"
)

// Presence as a map: a subscription in a namespace with a map presence
// prefix is a key of the channel prefix+channel, a map_clients channel
// (one key per connection) or a map_users channel (one per user). Keys are
// set at join, refreshed by the presence loop without a change (so
// followers see no update), and removed when the client leaves
// (map_clients) or when their TTL passes after the user's last connection
// left (map_users).

// hasMapPresence reports whether the namespace keeps map presence.
func (o NamespaceOptions) hasMapPresence() bool {
	return o.MapClientsPresenceChannelPrefix != "" || o.MapUsersPresenceChannelPrefix != ""
}

// touchMapPresence sets or refreshes the client's keys for s.
func (c *Client) touchMapPresence(ctx context.Context, s *subscription) {
	info := c.clientInfo(s.chanInfo)
	c.touchMapPresenceKey(ctx, s, s.rule.MapClientsPresenceChannelPrefix, SubscriptionMapClients, info.Client, info)
	if info.User != "" {
		c.touchMapPresenceKey(ctx, s, s.rule.MapUsersPresenceChannelPrefix, SubscriptionMapUsers, info.User, info)
	}
}

func (c *Client) touchMapPresenceKey(ctx context.Context, s *subscription, prefix string, want SubscriptionType, key string, info *engine.ClientInfo) {
	if prefix == "" {
		return
	}
	target, r := c.hub.mapPresenceChannel(prefix, s.channel, want)
	if r == nil {
		return
	}
	opts := r.Map.publishOptions()
	opts.TouchIfExists = true
	if _, err := c.hub.mapPublishWith(ctx, target, r, &engine.Publication{Key: key, Info: info}, opts); err != nil && c.hub.ctx.Err() == nil {
		c.logger().Warn("map presence", "channel", target, "error", err)
	}
}

// leaveMapPresence removes the client's map_clients key for s; its
// map_users key expires on its own, since the user may have other
// connections.
func (c *Client) leaveMapPresence(ctx context.Context, s *subscription) {
	prefix := s.rule.MapClientsPresenceChannelPrefix
	if prefix == "" {
		return
	}
	target, r := c.hub.mapPresenceChannel(prefix, s.channel, SubscriptionMapClients)
	if r == nil {
		return
	}
	opts := r.Map.publishOptions()
	opts.SkipMissingRemove = true
	_, err := c.hub.mapPublishWith(ctx, target, r, &engine.Publication{Key: c.id, Removed: true}, opts)
	if err != nil && !errors.Is(err, engine.ErrMapKeyNotFound) && c.hub.ctx.Err() == nil {
		c.logger().Warn("map presence leave", "channel", target, "error", err)
	}
}

// mapPresenceChannel resolves the presence channel of ch, or logs why it
// cannot be one and returns a nil rule.
func (h *Hub) mapPresenceChannel(prefix, ch string, want SubscriptionType) (string, *rule) {
	target := prefix + ch
	r, e := h.channels.resolve(target)
	if e == nil {
		e = h.channels.checkLength(target)
	}
	if e != nil || r.SubscriptionType != want {
		h.log.Error("map presence channel is not usable: its namespace must exist and have this subscription type", "channel", target, "want", want)
		return target, nil
	}
	return target, r
}
