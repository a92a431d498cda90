package hub

import (
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub/internal/permission"
)

// The namespace's grants as the permission rules (hub/internal/permission)
// take them, and the client's checks: the rules with the client's user,
// and insecure mode (ClientConfig.Insecure), which allows every action but
// subscribing to private channels, as in the reference server.

func (r *rule) subscribeGrant() permission.Grant {
	return permission.Grant{Anonymous: r.AllowSubscribeForAnonymous, Client: r.AllowSubscribeForClient}
}

func (r *rule) publishGrant() permission.Grant {
	return permission.Grant{Anonymous: r.AllowPublishForAnonymous, Client: r.AllowPublishForClient, Subscriber: r.AllowPublishForSubscriber}
}

func (r *rule) historyGrant() permission.Grant {
	return permission.Grant{Anonymous: r.AllowHistoryForAnonymous, Client: r.AllowHistoryForClient, Subscriber: r.AllowHistoryForSubscriber}
}

func (r *rule) presenceGrant() permission.Grant {
	return permission.Grant{Anonymous: r.AllowPresenceForAnonymous, Client: r.AllowPresenceForClient, Subscriber: r.AllowPresenceForSubscriber}
}

func (m *MapOptions) publishGrant() permission.Grant {
	return permission.Grant{Anonymous: m.AllowPublishForAnonymous, Client: m.AllowPublishForClient, Subscriber: m.AllowPublishForSubscriber}
}

func (m *MapOptions) removeGrant() permission.Grant {
	return permission.Grant{Anonymous: m.AllowRemoveForAnonymous, Client: m.AllowRemoveForClient, Subscriber: m.AllowRemoveForSubscriber}
}

// subscribePermitted reports whether user may subscribe to ch of
// namespace r without a subscription token. Insecure mode is the caller's
// to apply (subscriptions a client asks to resume at connect do not get
// it).
func subscribePermitted(r *rule, ch, user string) bool {
	return r.perm.Subscribe(r.subscribeGrant(), r.AllowUserLimitedChannels, ch, user)
}

func (c *Client) hasSubscribePermission(r *rule, ch string) bool {
	return subscribePermitted(r, ch, c.User()) || (c.hub.client.Insecure && !r.perm.Private(ch)) ||
		c.celAllows(r.cel.subscribe, r, ch, false)
}

// hasPermission applies g to the client, or insecure mode.
func (c *Client) hasPermission(g permission.Grant, subscribed bool) bool {
	return g.Allows(c.User(), subscribed) || c.hub.client.Insecure
}

// ownsSubscribeToken reports whether a subscription token is this
// client's for ch.
func (c *Client) ownsSubscribeToken(tok auth.SubscribeToken, ch string) bool {
	return permission.OwnsToken(tok, ch, c.User(), c.id)
}
