package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// The methods in this file are the server side of the protocol: what an
// embedding application or the HTTP API does to channels and users. They
// act on the whole cluster through the engine.

// PublishOptions adjust a server-side publication.
type PublishOptions struct {
	// Tags travel with the publication, subscribers' tags filters read
	// them. Keys and values together are at most the namespace's
	// TagsMaxSize bytes (error 107 otherwise).
	Tags map[string]string
	// SkipHistory delivers the publication without keeping it in the
	// channel's stream.
	SkipHistory bool
	// Info is attached as the publishing client; nil for the server.
	Info *engine.ClientInfo
	// ExceptClient is a client id (Client.ID) that does not receive the
	// publication live, on whatever node it is: the sender of a chat
	// message that already shows it, say. History keeps the publication
	// as usual, so that client may still see it when it recovers.
	ExceptClient string
	// IdempotencyKey, when not empty, publishes at most once per channel
	// and key within Config.IdempotencyWindow, across the cluster: a
	// repeat (a retried request) returns the first publication's position
	// and delivers nothing. At most MaxIdempotencyKey bytes. Engines that
	// cannot remember keys (NATS) answer error 108.
	IdempotencyKey string
	// Delta sends the publication as a Fossil delta to the subscribers
	// that negotiated delta, as the namespace's delta_publish does for
	// every publication: the server API's per-publish delta flag. The
	// flag travels with the publication to every node.
	Delta bool
}

// Publish sends data to every subscriber of ch on every node. With history
// on the channel, it returns the publication's stream position.
func (h *Hub) Publish(ctx context.Context, ch string, data []byte, opts PublishOptions) (engine.StreamPosition, error) {
	r, err := h.resolveForServer(ch)
	if err != nil {
		return engine.StreamPosition{}, err
	}
	pubRule := r
	if opts.SkipHistory {
		pubRule = r.withoutHistory()
	}
	if len(opts.IdempotencyKey) > MaxIdempotencyKey {
		return engine.StreamPosition{}, &Error{Code: protocol.ErrorBadRequest, Message: fmt.Sprintf("idempotency_key: %d bytes, at most %d", len(opts.IdempotencyKey), MaxIdempotencyKey)}
	}
	if err := r.checkTags(opts.Tags); err != nil {
		return engine.StreamPosition{}, err
	}
	if r.isMap() {
		// A publication without a key would corrupt subscribers' maps.
		return engine.StreamPosition{}, &Error{Code: protocol.ErrorBadRequest, Message: fmt.Sprintf("bad request: channel %q is in a map namespace: set keys with map_publish", ch)}
	}
	if r.SubscriptionType == SubscriptionSharedPoll {
		return engine.StreamPosition{}, &Error{Code: protocol.ErrorBadRequest, Message: fmt.Sprintf("bad request: channel %q is in a shared_poll namespace: use shared_poll_publish", ch)}
	}
	sp, err := h.publish(ctx, ch, pubRule, &engine.Publication{Data: data, Info: opts.Info, Tags: opts.Tags, ExceptClient: opts.ExceptClient, Delta: opts.Delta}, opts.IdempotencyKey)
	switch {
	case engine.IsUnsupported(err):
		// Of what Publish asks, only remembering idempotency keys is
		// something an engine may lack.
		return sp, &Error{Code: protocol.ErrorNotAvailable, Message: "not available: idempotency_key needs an engine that remembers keys (memory, redis or postgres)"}
	case engine.IsTemporary(err):
		// The engine keeps every key for its whole window and is full:
		// the caller may retry later.
		return sp, &Error{Code: protocol.ErrorTooManyRequests, Message: "too many requests: " + err.Error(), Temporary: true}
	}
	return sp, err
}

// History reads ch's stream. since is exclusive; limit 0 returns the
// position only and -1 everything.
func (h *Hub) History(ctx context.Context, ch string, since *engine.StreamPosition, limit int, reverse bool) ([]*engine.Publication, engine.StreamPosition, error) {
	r, err := h.resolveForServer(ch)
	if err != nil {
		return nil, engine.StreamPosition{}, err
	}
	if !r.HasHistory() {
		return nil, engine.StreamPosition{}, newError(protocol.ErrorNotAvailable)
	}
	return h.history(ctx, ch, r, since, limit, reverse, 0)
}

// RemoveHistory drops ch's publications; its stream position is kept.
func (h *Hub) RemoveHistory(ctx context.Context, ch string) error {
	r, err := h.resolveForServer(ch)
	if err != nil {
		return err
	}
	if !r.HasHistory() {
		return newError(protocol.ErrorNotAvailable)
	}
	if err := h.engine.RemoveHistory(ctx, ch); err != nil {
		return fmt.Errorf("remove history of %q: %w", ch, err)
	}
	return nil
}

// Presence returns who is in ch, by client id.
func (h *Hub) Presence(ctx context.Context, ch string) (map[string]*engine.ClientInfo, error) {
	r, err := h.resolveForServer(ch)
	if err != nil {
		return nil, err
	}
	if !r.Presence {
		return nil, newError(protocol.ErrorNotAvailable)
	}
	m, err := h.engine.Presence(ctx, ch)
	if err != nil {
		return nil, fmt.Errorf("presence of %q: %w", ch, err)
	}
	return m, nil
}

// PresenceStats counts who is in ch.
func (h *Hub) PresenceStats(ctx context.Context, ch string) (engine.PresenceStats, error) {
	r, err := h.resolveForServer(ch)
	if err != nil {
		return engine.PresenceStats{}, err
	}
	if !r.Presence {
		return engine.PresenceStats{}, newError(protocol.ErrorNotAvailable)
	}
	st, err := h.engine.PresenceStats(ctx, ch)
	if err != nil {
		return st, fmt.Errorf("presence stats of %q: %w", ch, err)
	}
	return st, nil
}

// DisconnectUser closes every connection of user on every node, except
// the client ids in whitelist; with client set, only that connection.
func (h *Hub) DisconnectUser(ctx context.Context, user, client string, whitelist []string, code uint32, reason string) error {
	return h.sendControl(ctx, controlMessage{Disconnect: &controlDisconnect{
		User: user, Client: client, Whitelist: whitelist, Code: code, Reason: reason,
	}})
}

// DisconnectSession closes the connection of user whose session is
// session (ConnInfo.Session: the HTTP-streaming and SSE emulation session
// that the connect reply names), on whichever node holds it; with client
// set, only if it is that connection too.
func (h *Hub) DisconnectSession(ctx context.Context, user, client, session string, code uint32, reason string) error {
	if session == "" {
		return errors.New("hub: DisconnectSession needs a session")
	}
	return h.sendControl(ctx, controlMessage{Disconnect: &controlDisconnect{
		User: user, Client: client, Session: session, Code: code, Reason: reason,
	}})
}

// UnsubscribeSession is UnsubscribeUser for the connection of user whose
// session is session (see DisconnectSession).
func (h *Hub) UnsubscribeSession(ctx context.Context, user, ch, client, session string) error {
	if session == "" {
		return errors.New("hub: UnsubscribeSession needs a session")
	}
	return h.sendControl(ctx, controlMessage{Unsubscribe: &controlUnsubscribe{User: user, Channel: ch, Client: client, Session: session}})
}

// UnsubscribeUser removes user (or only its connection client) from ch
// on every node; the clients get an unsubscribe push. An empty ch means
// every channel.
func (h *Hub) UnsubscribeUser(ctx context.Context, user, ch, client string) error {
	return h.sendControl(ctx, controlMessage{Unsubscribe: &controlUnsubscribe{User: user, Channel: ch, Client: client}})
}

// SendToUser pushes data as an asynchronous message (the message push) to
// every connection of user on every node, or with client set only to that
// connection. Client.Send does the same for a connection of this node.
func (h *Hub) SendToUser(ctx context.Context, user, client string, data []byte) error {
	return h.sendControl(ctx, controlMessage{Send: &controlSend{User: user, Client: client, Data: data}})
}

// SubscribeOptions describe a server-side subscription made through the API.
type SubscribeOptions struct {
	// Info becomes the subscription's chan_info; Data is sent to the client
	// in the subscribe push.
	Info, Data []byte
	// ExpireAt ends the subscription (Unix seconds; 0 never).
	ExpireAt int64
	// RecoverSince sends the client what it missed after this position.
	RecoverSince *StreamPositionArg
	// Session, when set, subscribes only the connection with that session
	// (see DisconnectSession).
	Session string
	// Override replaces the namespace's presence, join/leave and
	// recovery options for this subscription, as a subscription token's
	// override claim does.
	Override *auth.SubOverride
}

// StreamPositionArg is a stream position given by the server API.
type StreamPositionArg struct {
	Offset uint64
	Epoch  string
}

// SubscribeUser subscribes user's connections (or only client) on every
// node to ch; each gets a subscribe push.
func (h *Hub) SubscribeUser(ctx context.Context, user, ch, client string, opts SubscribeOptions) error {
	if err := h.CheckChannel(ch); err != nil {
		return err
	}
	return h.sendControl(ctx, controlMessage{Subscribe: &controlSubscribe{
		User: user, Channel: ch, Client: client, Info: opts.Info, Data: opts.Data,
		ExpireAt: opts.ExpireAt, RecoverSince: streamPositionToWire(opts.RecoverSince),
		Session: opts.Session, Override: opts.Override,
	}})
}

// RefreshUser sets the expiry of user's connections (or only client) on
// every node: expired closes them with 3005, otherwise expireAt (Unix
// seconds; 0 never) and, when given, info replace the current ones.
func (h *Hub) RefreshUser(ctx context.Context, user, client string, expired bool, expireAt int64, info []byte) error {
	return h.sendControl(ctx, controlMessage{Refresh: &controlRefresh{
		User: user, Client: client, Expired: expired, ExpireAt: expireAt, Info: info,
	}})
}

// RefreshSession is RefreshUser for the connection of user whose session
// is session (see DisconnectSession).
func (h *Hub) RefreshSession(ctx context.Context, user, client, session string, expired bool, expireAt int64, info []byte) error {
	if session == "" {
		return errors.New("hub: RefreshSession needs a session")
	}
	return h.sendControl(ctx, controlMessage{Refresh: &controlRefresh{
		User: user, Client: client, Session: session, Expired: expired, ExpireAt: expireAt, Info: info,
	}})
}

// CheckChannel reports whether ch is a channel the configuration allows:
// nil, or the *Error a client would get (107 too long or malformed, 102
// unknown namespace).
func (h *Hub) CheckChannel(ch string) error {
	_, err := h.resolveForServer(ch)
	return err
}

// Nodes lists the live nodes of the cluster, this one included.
func (h *Hub) Nodes() []NodeInfo {
	h.nodes.Update(h.localNodeInfo())
	return h.nodes.List()
}

// Uptime is how long this hub has run.
func (h *Hub) Uptime() time.Duration { return time.Since(h.started) }

func (h *Hub) resolveForServer(ch string) (*rule, error) {
	if ch == "" {
		return nil, &Error{Code: protocol.ErrorBadRequest, Message: "channel required"}
	}
	if e := h.channels.checkLength(ch); e != nil {
		return nil, e
	}
	r, e := h.channels.resolve(ch)
	if e != nil {
		return nil, e
	}
	return r, nil
}
