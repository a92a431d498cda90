package hub

import (
	"context"
	"strconv"
	"time"

	"github.com/heraldhq/herald/engine"
)

// The 'online' time of a user status (Centrifugo PRO's UserStatus.online,
// centrifugal.dev docs/pro/user_status.md: "updated periodically by
// Centrifugo itself while user has active connection"): with
// ClientConfig.UserStatusOnlineInterval, every node writes the time for
// each authenticated user connected to it, once per interval, in a bucket
// of its own, so that get_user_status reads it beside 'active' and an
// application can tell "connected but idle" from "active".

// userOnlineBucket is the store bucket of online times, keyed by user.
const userOnlineBucket = "user_online"

// onlineLoop records the node's users as online every interval, starting
// at once.
func (h *Hub) onlineLoop() {
	defer h.wg.Done()
	st, ok := engine.StoreOf(h.engine)
	if !ok {
		h.log.Warn("client.user_status_online_interval is set, but the engine keeps no store: 'online' stays 0", "engine", h.engine)
		return
	}
	interval := h.client.UserStatusOnlineInterval
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(h.ctx, interval)
		err := h.recordOnline(ctx, st, time.Now())
		cancel()
		if err != nil && h.ctx.Err() == nil {
			h.log.Warn("record online users", "error", err)
		}
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// recordOnline writes now as the online time of every user connected to
// this node.
func (h *Hub) recordOnline(ctx context.Context, st engine.Store, now time.Time) error {
	value := []byte(strconv.FormatInt(now.Unix(), 10))
	exp := now.Add(h.client.UserStatusTTL)
	for _, u := range h.users.names() {
		if u == "" {
			continue // anonymous connections have no status
		}
		if err := st.StoreSet(ctx, userOnlineBucket, u, value, exp); err != nil {
			return err
		}
	}
	return nil
}

// readOnline fills the Online time of statuses from the store.
func (h *Hub) readOnline(ctx context.Context, st engine.Store, users []string, out []UserStatus) error {
	found, err := st.StoreGet(ctx, userOnlineBucket, users)
	if err != nil {
		return err
	}
	for i, u := range users {
		if e, ok := found[u]; ok {
			// A value that does not parse reads as never online.
			out[i].Online, _ = strconv.ParseInt(string(e.Value), 10, 64)
		}
	}
	return nil
}
