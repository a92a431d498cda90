// Package permission holds the hub's permission rules: which channels need
// a subscription token, which name the users allowed in them, whether a
// subscription token is the client's, and what a namespace's grants allow
// a client that brings no token when no handler decides instead (the hub's
// OnSubscribe, OnPublish, OnPresence, OnHistory and OnMapPublish replace
// these checks when they answer). It knows nothing of clients or of the
// hub's options: the hub passes the user, the grants and the channel.
// Insecure mode is the hub's to apply.
package permission

import (
	"strings"

	"github.com/heraldhq/herald/auth"
)

// Channel name conventions shared with the reference server.
const (
	// PrivatePrefix starts the name of a channel that needs a subscription
	// token.
	PrivatePrefix = "$"
	// userBoundary starts the list of users allowed in a user-limited
	// channel, separated by userSeparator.
	userBoundary  = "#"
	userSeparator = ","
)

// UserChannel is the user-limited channel name part that only user may
// join ("#user"), after the namespace and its boundary if any.
func UserChannel(user string) string { return userBoundary + user }

// Private reports whether ch needs a subscription token.
func Private(ch string) bool { return strings.HasPrefix(ch, PrivatePrefix) }

// UserLimited reports whether ch names its allowed users.
func UserLimited(ch string) bool { return strings.Contains(ch, userBoundary) }

// UserListed reports whether ch is a user-limited channel that lists user.
func UserListed(ch, user string) bool {
	i := strings.LastIndex(ch, userBoundary)
	if i < 0 || user == "" {
		return false
	}
	for _, u := range strings.Split(ch[i+1:], userSeparator) {
		if u == user {
			return true
		}
	}
	return false
}

// Grant is what a namespace allows for one action (subscribe, publish,
// remove a map key, history, presence) to a client without a token:
// anonymous users too, every authenticated user, or the subscribers of
// the channel.
type Grant struct {
	Anonymous, Client, Subscriber bool
}

// Allows applies g: an authenticated user is allowed by Client, or by
// Subscriber when subscribed; an anonymous one also needs Anonymous.
func (g Grant) Allows(user string, subscribed bool) bool {
	if user == "" && !g.Anonymous {
		return false
	}
	return g.Client || g.Subscriber && subscribed
}

// Subscribe reports whether user may subscribe to ch without a
// subscription token: never to a private channel; to a user-limited one,
// where the namespace allows them (allowUserLimited), when it lists user;
// otherwise as the namespace's subscribe grant says (Subscriber does not
// apply).
func Subscribe(g Grant, allowUserLimited bool, ch, user string) bool {
	if Private(ch) {
		return false
	}
	if allowUserLimited && UserLimited(ch) {
		return UserListed(ch, user)
	}
	return g.Allows(user, false)
}

// OwnsToken reports whether a subscription token is for ch and the
// client (id) of user: the same channel and user, and the same client when
// the token names one.
func OwnsToken(tok auth.SubscribeToken, ch, user, client string) bool {
	return tok.Channel == ch && tok.User == user && (tok.Client == "" || tok.Client == client)
}
