package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/engine"
)

// AddPresence adds or refreshes info.Client in ch until ttl from now.
func (e *Engine) AddPresence(ctx context.Context, ch string, info *engine.ClientInfo, ttl time.Duration) error {
	if err := e.life.Usable(ctx); err != nil {
		return fmt.Errorf("add presence %q: %w", ch, err)
	}
	if info == nil {
		return fmt.Errorf("add presence %q: nil client info", ch)
	}
	if ttl <= 0 {
		return fmt.Errorf("add presence %q: ttl %v is not positive", ch, ttl)
	}
	e.shard(ch).presence.add(ch, info, after(e.now(), ttl))
	return nil
}

// RemovePresence removes clientID from ch; removing an absent client is not
// an error.
func (e *Engine) RemovePresence(ctx context.Context, ch string, clientID string) error {
	if err := e.life.Usable(ctx); err != nil {
		return fmt.Errorf("remove presence %q: %w", ch, err)
	}
	e.shard(ch).presence.remove(ch, clientID)
	return nil
}

// Presence returns ch's unexpired clients; the map is the caller's.
func (e *Engine) Presence(ctx context.Context, ch string) (map[string]*engine.ClientInfo, error) {
	if err := e.life.Usable(ctx); err != nil {
		return nil, fmt.Errorf("presence %q: %w", ch, err)
	}
	return e.shard(ch).presence.presence(ch, e.now()), nil
}

// PresenceStats counts ch's unexpired clients and their distinct users;
// anonymous clients together count as one user, as in Centrifugo.
func (e *Engine) PresenceStats(ctx context.Context, ch string) (engine.PresenceStats, error) {
	if err := e.life.Usable(ctx); err != nil {
		return engine.PresenceStats{}, fmt.Errorf("presence stats %q: %w", ch, err)
	}
	return e.shard(ch).presence.stats(ch, e.now()), nil
}
