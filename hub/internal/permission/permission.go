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

// Syntax is how channel names mark private and user-limited channels;
// the hub fills it from its ChannelSyntax, defaults applied ('$', '#' and
// ','), so every field is set.
type Syntax struct {
	// PrivatePrefix starts the name of a channel that needs a subscription
	// token.
	PrivatePrefix string
	// UserBoundary starts the list of users allowed in a user-limited
	// channel, separated by UserSeparator.
	UserBoundary  string
	UserSeparator string
}

// Private reports whether ch needs a subscription token.
func (s *Syntax) Private(ch string) bool { return strings.HasPrefix(ch, s.PrivatePrefix) }

// UserLimited reports whether ch names its allowed users.
func (s *Syntax) UserLimited(ch string) bool { return strings.Contains(ch, s.UserBoundary) }

// UserListed reports whether ch is a user-limited channel that lists user.
func (s *Syntax) UserListed(ch, user string) bool {
	i := strings.LastIndex(ch, s.UserBoundary)
	if i < 0 || user == "" {
		return false
	}
	rest := ch[i+len(s.UserBoundary):]
	if s.UserSeparator == "" {
		return rest == user
	}
	for rest != "" {
		u, after, _ := strings.Cut(rest, s.UserSeparator)
		if u == user {
			return true
		}
		rest = after
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
func (s *Syntax) Subscribe(g Grant, allowUserLimited bool, ch, user string) bool {
	if s.Private(ch) {
		return false
	}
	if allowUserLimited && s.UserLimited(ch) {
		return s.UserListed(ch, user)
	}
	return g.Allows(user, false)
}

// OwnsToken reports whether a subscription token is for ch and the
// client (id) of user: the same channel and user, and the same client when
// the token names one.
func OwnsToken(tok auth.SubscribeToken, ch, user, client string) bool {
	return tok.Channel == ch && tok.User == user && (tok.Client == "" || tok.Client == client)
}
