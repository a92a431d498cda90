package hub

import "github.com/heraldhq/herald/auth"

// Permission checks: whether a subscription token is the client's, and
// what a namespace's options allow a client that brings no token, when no handler decides instead (OnSubscribe,
// OnPublish, OnPresence and OnHistory replace these checks when they
// answer). Insecure mode (ClientConfig.Insecure) allows every action but
// subscribing to private channels, as in the reference server.

// permitted applies a namespace permission: any of grants allows an
// authenticated user; an anonymous one also needs forAnonymous.
func permitted(user string, forAnonymous bool, grants ...bool) bool {
	if user == "" && !forAnonymous {
		return false
	}
	for _, g := range grants {
		if g {
			return true
		}
	}
	return false
}

// subscribePermitted reports whether user may subscribe to ch of
// namespace r without a subscription token: never to a private channel;
// to a user-limited one when it names user; otherwise as the namespace's
// subscribe permissions say. Insecure mode is the caller's to apply
// (subscriptions a client asks to resume at connect do not get it).
func subscribePermitted(r *rule, ch, user string) bool {
	if isPrivate(ch) {
		return false
	}
	if r.AllowUserLimitedChannels && isUserLimited(ch) {
		return userAllowed(ch, user)
	}
	return permitted(user, r.AllowSubscribeForAnonymous, r.AllowSubscribeForClient)
}

func (c *Client) hasSubscribePermission(r *rule, ch string) bool {
	return subscribePermitted(r, ch, c.User()) || (c.hub.client.Insecure && !isPrivate(ch))
}

func (c *Client) hasPublishPermission(r *rule, subscribed bool) bool {
	return permitted(c.User(), r.AllowPublishForAnonymous, r.AllowPublishForClient, r.AllowPublishForSubscriber && subscribed) || c.hub.client.Insecure
}

func (c *Client) hasHistoryPermission(r *rule, subscribed bool) bool {
	return permitted(c.User(), r.AllowHistoryForAnonymous, r.AllowHistoryForClient, r.AllowHistoryForSubscriber && subscribed) || c.hub.client.Insecure
}

func (c *Client) hasPresencePermission(r *rule, subscribed bool) bool {
	return permitted(c.User(), r.AllowPresenceForAnonymous, r.AllowPresenceForClient, r.AllowPresenceForSubscriber && subscribed) || c.hub.client.Insecure
}

// ownsSubscribeToken reports whether a subscription token is this
// client's for ch: the same channel and user, and the same client when
// the token names one.
func (c *Client) ownsSubscribeToken(tok auth.SubscribeToken, ch string) bool {
	return tok.Channel == ch && tok.User == c.User() && (tok.Client == "" || tok.Client == c.id)
}
