package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// User status (Centrifugo PRO's update_user_status, get_user_status and
// delete_user_status): when each user was last active, and a state string
// of the application's, kept in the engine's store for
// ClientConfig.UserStatusTTL after the last update. Unlike revocations,
// statuses are read from the store when asked (one read for every user of
// a call), not held by every node.

// userStatusBucket is the store bucket of statuses, keyed by user.
const userStatusBucket = "user_status"

// MaxUserStatusUsers bounds the users of one status call.
const MaxUserStatusUsers = 1000

// UserStatus is one user's status. Active is when the user was last
// marked active (Unix seconds), 0 when there is no status; Online is
// when a node last saw the user connected (userstatus_online.go), 0
// unless ClientConfig.UserStatusOnlineInterval is set.
type UserStatus struct {
	User   string `json:"user"`
	Active int64  `json:"active"`
	Online int64  `json:"online"`
	State  string `json:"state,omitempty"`
}

type storedStatus struct {
	Active int64  `json:"a"`
	State  string `json:"s,omitempty"`
}

func (h *Hub) statusStore(users []string) (engine.Store, error) {
	if len(users) == 0 {
		return nil, protocol.ErrorBadRequest.Codedf("bad request: users is required")
	}
	if len(users) > MaxUserStatusUsers {
		return nil, protocol.ErrorBadRequest.Codedf("bad request: users: %d users, at most %d per call", len(users), MaxUserStatusUsers)
	}
	for i, u := range users {
		if u == "" {
			return nil, protocol.ErrorBadRequest.Codedf("bad request: users[%d] is empty", i)
		}
	}
	st, ok := engine.StoreOf(h.engine)
	if !ok {
		return nil, errNoStore(h.engine)
	}
	return st, nil
}

// UpdateUserStatus marks users active now, with state.
func (h *Hub) UpdateUserStatus(ctx context.Context, users []string, state string) error {
	st, err := h.statusStore(users)
	if err != nil {
		return err
	}
	now := time.Now()
	value, err := json.Marshal(storedStatus{Active: now.Unix(), State: state})
	if err != nil {
		return fmt.Errorf("hub: update_user_status: %w", err)
	}
	exp := now.Add(h.client.UserStatusTTL)
	for _, u := range users {
		if err := st.StoreSet(ctx, userStatusBucket, u, value, exp); err != nil {
			return fmt.Errorf("hub: update_user_status of %q: %w", u, err)
		}
	}
	return nil
}

// GetUserStatus returns the status of each of users, in their order; a
// user without one has Active 0.
func (h *Hub) GetUserStatus(ctx context.Context, users []string) ([]UserStatus, error) {
	st, err := h.statusStore(users)
	if err != nil {
		return nil, err
	}
	found, err := st.StoreGet(ctx, userStatusBucket, users)
	if err != nil {
		return nil, fmt.Errorf("hub: get_user_status: %w", err)
	}
	out := make([]UserStatus, len(users))
	for i, u := range users {
		out[i].User = u
		e, ok := found[u]
		if !ok {
			continue
		}
		s, err := decodeStoredStatus(e.Value)
		if err != nil {
			h.log.Warn("get_user_status: a stored status is not readable; treated as none", "user", u, "error", err)
			continue
		}
		out[i].Active, out[i].State = s.Active, s.State
	}
	if h.client.UserStatusOnlineInterval > 0 {
		if err := h.readOnline(ctx, st, users, out); err != nil {
			return nil, fmt.Errorf("hub: get_user_status: online times: %w", err)
		}
	}
	return out, nil
}

// DeleteUserStatus forgets the status of users.
func (h *Hub) DeleteUserStatus(ctx context.Context, users []string) error {
	st, err := h.statusStore(users)
	if err != nil {
		return err
	}
	if err := st.StoreDelete(ctx, userStatusBucket, users); err != nil {
		return fmt.Errorf("hub: delete_user_status: %w", err)
	}
	if err := st.StoreDelete(ctx, userOnlineBucket, users); err != nil {
		return fmt.Errorf("hub: delete_user_status: online times: %w", err)
	}
	return nil
}

// userStatusRPC is the client rpc method that marks the client's user
// active (ClientConfig.UserStatusRPC), Centrifugo PRO's built-in name.
const userStatusRPC = "update_user_status"

// updateOwnStatus answers the rpc: an anonymous client has no status to
// set (107).
func (c *Client) updateOwnStatus(ctx context.Context, id uint32) error {
	user := c.User()
	if user == "" {
		return protocol.ErrorBadRequest.Codedf("bad request: update_user_status: an anonymous connection has no user status")
	}
	if err := c.hub.UpdateUserStatus(ctx, []string{user}, ""); err != nil {
		return err
	}
	c.queueReply(&protocol.Reply{Id: id, Rpc: &protocol.RPCResult{}})
	return nil
}
