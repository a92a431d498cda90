package hub

import (
	"errors"
	"slices"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/protocol"
)

// Channel capabilities (Centrifugo PRO's, auth/caps.go): the connection's
// caps, from its token or the connect handler (ConnectReply.Caps), and a
// subscription's allow, from its token or the subscribe handler
// (SubscribeReply.Allow). They are asked where the namespace's own rules
// are, after the application's handlers, which decide first when they
// decide, as in Centrifugo PRO (the order its documentation's permission
// explorer follows): a capability adds to what the namespace allows and
// never takes away, and a private channel still needs a subscription
// token.

// capsAllow reports whether the connection's caps grant op on ch, or the
// subscription s (nil: not subscribed) has op in its allow.
func (c *Client) capsAllow(op auth.Ops, ch string, s *subscription) bool {
	c.mu.Lock()
	var caps *auth.Caps
	if c.rare != nil {
		caps = c.rare.caps
	}
	var allow auth.Ops
	if s != nil {
		allow = s.allow
	}
	c.mu.Unlock()
	return allow&op != 0 || caps.Allows(op, ch)
}

// setCapsLocked replaces the connection's caps (none makes no rareState);
// c.mu must be held.
func (c *Client) setCapsLocked(caps *auth.Caps) {
	if caps == nil && c.rare == nil {
		return
	}
	c.rareLocked().caps = caps
}

// dropUncapped unsubscribes the client, with 2000 (a server unsubscribe,
// which SDKs do not retry), from the channels it subscribed to through a
// connection capability that its new caps no longer grant; the
// subscriptions other permissions allowed stay, as in Centrifugo PRO.
func (c *Client) dropUncapped() {
	c.mu.Lock()
	var caps *auth.Caps
	if c.rare != nil {
		caps = c.rare.caps
	}
	var gone []*subscription
	for ch, s := range c.subs {
		if s.viaCaps && !caps.Allows(auth.OpSubscribe, ch) {
			gone = append(gone, s)
		}
	}
	c.mu.Unlock()
	for _, s := range gone {
		c.unsubscribeIf(s.channel, s, protocol.UnsubscribeServer)
	}
}

// resumedByCaps reports whether s, made at connect, is a subscription the
// client asked to resume (ConnectRequest.subs) that only its caps allowed:
// not one its credentials name (or its personal channel), nor one the
// namespace allows.
func (c *Client) resumedByCaps(cred credentials, req *protocol.ConnectRequest, s *subscription) bool {
	if cred.Caps == nil || req.Subs[s.channel] == nil || slices.Contains(cred.Channels, s.channel) ||
		c.hub.personalChannel(cred.User) == s.channel {
		return false
	}
	if _, named := cred.subOptions[s.channel]; named {
		return false
	}
	return !subscribePermitted(s.rule, s.channel, cred.User)
}

// invalidCapsDisconnect is 3500 (invalid token) for a token whose caps
// cannot be used, with the problem in the reason (cut to fit a close
// frame) so that the developer sees it in the client as in the log; nil
// for other errors.
func invalidCapsDisconnect(err error) *Disconnect {
	if !errors.Is(err, auth.ErrInvalidCaps) {
		return nil
	}
	reason := err.Error()
	// A close frame's reason is at most 123 bytes; cut on a byte that
	// starts a character.
	const maxReason = 123
	if len(reason) > maxReason {
		n := maxReason
		for n > 0 && reason[n]&0xC0 == 0x80 {
			n--
		}
		reason = reason[:n]
	}
	return &Disconnect{Code: uint32(protocol.DisconnectInvalidToken), Reason: reason}
}
