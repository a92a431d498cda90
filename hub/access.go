package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub/internal/access"
	"github.com/heraldhq/herald/protocol"
)

// Token revocation and user blocking (Centrifugo PRO's revoke_token,
// invalidate_user_tokens, block_user and unblock_user). A decision is
// written to the engine's store, so that it survives restarts and nodes
// that start later load it, and sent to every node as a control message,
// so that each node updates its in-memory copy (hub/internal/access) and
// closes its own connections that it now refuses. Connect and subscribe
// consult only the in-memory copy; every node also reloads it from the
// store each accessReloadInterval, which repairs a control message lost
// to a broken engine connection.

// accessReloadInterval is how often a node reloads revocations and blocks
// from the engine's store and forgets expired ones.
const accessReloadInterval = 10 * time.Second

// errNoStore answers the access methods on an engine without a store.
func errNoStore(e engine.Engine) error {
	return protocol.ErrorNotAvailable.Codedf("not available: the %T engine keeps no state for the cluster; token revocation, user blocking and user status need the memory, PostgreSQL or Redis engine", e)
}

// RevokeToken makes the token whose jti claim is id unusable until
// expireAt (Unix seconds; 0 for ever, which keeps the record for ever:
// pass the token's exp). Connections holding it are closed with 3005
// (their SDK fetches a new token and reconnects) within a control
// message's delay on every node; connecting with it again is refused with
// 109 (token expired).
func (h *Hub) RevokeToken(ctx context.Context, id string, expireAt int64) error {
	if id == "" {
		return protocol.ErrorBadRequest.Codedf("bad request: uid (the token's jti) is required")
	}
	return h.decideAccess(ctx, access.Change{Kind: access.Revoke, ID: id, ExpireAt: expireAt})
}

// InvalidateUserTokens makes every token of user issued before
// issuedBefore (Unix seconds, the tokens' iat; 0 means now) unusable
// until expireAt (0: for ever). With channel empty these are connection
// tokens, and the user's connections holding one are closed with 3005;
// with a channel they are the user's subscription tokens of that channel,
// and the user's subscriptions to it are ended with 2501 (the SDK
// subscribes again with a new token). Tokens without iat are not
// affected.
func (h *Hub) InvalidateUserTokens(ctx context.Context, user string, issuedBefore, expireAt int64, channel string) error {
	if user == "" {
		return protocol.ErrorBadRequest.Codedf("bad request: user is required")
	}
	if issuedBefore <= 0 {
		issuedBefore = time.Now().Unix()
	}
	return h.decideAccess(ctx, access.Change{Kind: access.Invalidate, User: user, Channel: channel, IssuedBefore: issuedBefore, ExpireAt: expireAt})
}

// BlockUser blocks user until expireAt (Unix seconds; 0 for ever): the
// user's connections are closed with 3503 (force disconnect, no
// reconnect) on every node, and connecting is refused the same way once
// the token or the connect handler names the user.
func (h *Hub) BlockUser(ctx context.Context, user string, expireAt int64) error {
	if user == "" {
		return protocol.ErrorBadRequest.Codedf("bad request: user is required")
	}
	return h.decideAccess(ctx, access.Change{Kind: access.Block, User: user, ExpireAt: expireAt})
}

// UnblockUser lets user connect again.
func (h *Hub) UnblockUser(ctx context.Context, user string) error {
	if user == "" {
		return protocol.ErrorBadRequest.Codedf("bad request: user is required")
	}
	return h.decideAccess(ctx, access.Change{Kind: access.Unblock, User: user})
}

func (h *Hub) decideAccess(ctx context.Context, c access.Change) error {
	if c.ExpireAt != 0 && c.ExpireAt <= time.Now().Unix() {
		return protocol.ErrorBadRequest.Codedf("bad request: expire_at %d is in the past", c.ExpireAt)
	}
	st, ok := engine.StoreOf(h.engine)
	if !ok {
		return errNoStore(h.engine)
	}
	bucket, key, value, remove := c.StoreKey()
	var err error
	if remove {
		err = st.StoreDelete(ctx, bucket, []string{key})
	} else {
		err = st.StoreSet(ctx, bucket, key, value, unixTime(c.ExpireAt))
	}
	if err != nil {
		return fmt.Errorf("hub: %s: store: %w", c.Kind, err)
	}
	h.metrics.accessDecisions.WithLabelValues(string(c.Kind)).Inc()
	if err := h.sendControl(ctx, controlMessage{Access: &c}); err != nil {
		// Stored: every node applies it at its next reload.
		return fmt.Errorf("hub: %s: tell the cluster: %w", c.Kind, err)
	}
	return nil
}

func unixTime(sec int64) time.Time {
	if sec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0)
}

// applyAccess records a decision any node made and closes the local
// connections (or ends the subscriptions) it now refuses.
func (h *Hub) applyAccess(c access.Change) {
	h.access.Apply(c)
	switch c.Kind {
	case access.Block:
		for _, cl := range h.users.clients(c.User) {
			go cl.close(blockedDisconnect())
		}
	case access.Revoke:
		h.allConns.Range(func(k, _ any) bool {
			if cl := k.(*Client); cl.tokenMark().ID == c.ID {
				go cl.close(newDisconnect(protocol.DisconnectExpired))
			}
			return true
		})
	case access.Invalidate:
		for _, cl := range h.users.clients(c.User) {
			if c.Channel != "" {
				ch := c.Channel
				cl.runServerTask(func(context.Context) { cl.serverUnsubscribe(ch, protocol.UnsubscribeExpired) })
				continue
			}
			if iat := cl.tokenMark().IssuedAt; iat > 0 && iat < c.IssuedBefore {
				go cl.close(newDisconnect(protocol.DisconnectExpired))
			}
		}
	}
}

func blockedDisconnect() *Disconnect {
	return &Disconnect{Code: uint32(protocol.DisconnectForceNoReconnect), Reason: "user blocked"}
}

// accessRefusal is how a connect or subscribe is answered for v.
func accessRefusal(v access.Verdict) error {
	switch v {
	case access.Blocked:
		return blockedDisconnect()
	case access.Revoked, access.Invalidated:
		return newError(protocol.ErrorTokenExpired)
	}
	return nil
}

// loadAccess reads every revocation and block from the engine's store
// into the node's copy, and forgets what expired.
func (h *Hub) loadAccess(ctx context.Context) error {
	st, ok := engine.StoreOf(h.engine)
	if !ok {
		return nil
	}
	var errs []error
	for _, b := range []string{access.BucketRevoked, access.BucketInvalidated, access.BucketBlocked} {
		m := map[string]access.Stored{}
		start := time.Now()
		err := st.StoreScan(ctx, b, func(k string, e engine.StoreEntry) error {
			var exp int64
			if !e.ExpireAt.IsZero() {
				exp = e.ExpireAt.Unix()
			}
			m[k] = access.Stored{Value: e.Value, ExpireAt: exp}
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("load %s: %w", b, err))
			continue
		}
		h.access.Load(b, m, start)
	}
	h.access.Sweep(time.Now())
	return errors.Join(errs...)
}

// accessLoop reloads the node's copy until the hub closes.
func (h *Hub) accessLoop() {
	defer h.wg.Done()
	t := time.NewTicker(accessReloadInterval)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(h.ctx, accessReloadInterval)
		if err := h.loadAccess(ctx); err != nil && h.ctx.Err() == nil {
			h.log.Warn("reload token revocations and blocked users", "error", err)
		}
		cancel()
	}
}

// tokenMark is the jti and iat of the client's connection token (zero
// without either).
func (c *Client) tokenMark() access.Token {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rare == nil {
		return access.Token{}
	}
	return c.rare.token
}
