package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/engine"
)

// AddPresence adds or refreshes info.Client in ch until ttl from now. The
// entry is owned by this node: once the node is gone, the other nodes'
// hubs remove it (ForgetNode) without waiting for ttl.
func (e *Engine) AddPresence(ctx context.Context, ch string, info *engine.ClientInfo, ttl time.Duration) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("add presence %q: %w", ch, err)
	}
	if info == nil {
		return fmt.Errorf("add presence %q: nil client info", ch)
	}
	if ttl <= 0 {
		return fmt.Errorf("add presence %q: ttl %v is not positive", ch, ttl)
	}
	_, err := e.qPool.Exec(ctx, e.sql.presenceAdd, ch, info.Client, info.User, info.ConnInfo, info.ChanInfo,
		e.opts.NodeID, ttl.Microseconds())
	if err != nil {
		return fmt.Errorf("add presence %q: %w", ch, err)
	}
	return nil
}

// RemovePresence removes clientID from ch; removing an absent client is not
// an error.
func (e *Engine) RemovePresence(ctx context.Context, ch string, clientID string) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("remove presence %q: %w", ch, err)
	}
	if _, err := e.qPool.Exec(ctx, e.sql.presenceRemove, ch, clientID); err != nil {
		return fmt.Errorf("remove presence %q: %w", ch, err)
	}
	return nil
}

// Presence returns ch's unexpired clients across the cluster.
func (e *Engine) Presence(ctx context.Context, ch string) (map[string]*engine.ClientInfo, error) {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return nil, fmt.Errorf("presence %q: %w", ch, err)
	}
	rows, err := e.qPool.Query(ctx, e.sql.presenceList, ch)
	if err != nil {
		return nil, fmt.Errorf("presence %q: %w", ch, err)
	}
	defer rows.Close()
	out := make(map[string]*engine.ClientInfo)
	for rows.Next() {
		info := &engine.ClientInfo{}
		if err := rows.Scan(&info.Client, &info.User, &info.ConnInfo, &info.ChanInfo); err != nil {
			return nil, fmt.Errorf("presence %q: read row: %w", ch, err)
		}
		out[info.Client] = info
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("presence %q: %w", ch, err)
	}
	return out, nil
}

// PresenceStats counts ch's unexpired clients and their distinct users
// across the cluster; anonymous clients together count as one user.
func (e *Engine) PresenceStats(ctx context.Context, ch string) (engine.PresenceStats, error) {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return engine.PresenceStats{}, fmt.Errorf("presence stats %q: %w", ch, err)
	}
	var clients, users int64
	if err := e.qPool.QueryRow(ctx, e.sql.presenceStats, ch).Scan(&clients, &users); err != nil {
		return engine.PresenceStats{}, fmt.Errorf("presence stats %q: %w", ch, err)
	}
	return engine.PresenceStats{NumClients: int(clients), NumUsers: int(users)}, nil
}
