package nats

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/engine"
)

// presence returns the configured store, or why it cannot be used.
func (e *Engine) presence(ctx context.Context) (engine.PresenceManager, error) {
	if err := e.life.Usable(ctx); err != nil {
		return nil, err
	}
	if e.opts.Presence == nil {
		return nil, ErrNoPresence
	}
	return e.opts.Presence, nil
}

// AddPresence adds or refreshes info.Client in ch through Config.Presence.
func (e *Engine) AddPresence(ctx context.Context, ch string, info *engine.ClientInfo, ttl time.Duration) error {
	p, err := e.presence(ctx)
	if err != nil {
		return fmt.Errorf("add presence %q: %w", ch, err)
	}
	return p.AddPresence(ctx, ch, info, ttl)
}

// RemovePresence removes clientID from ch through Config.Presence.
func (e *Engine) RemovePresence(ctx context.Context, ch string, clientID string) error {
	p, err := e.presence(ctx)
	if err != nil {
		return fmt.Errorf("remove presence %q: %w", ch, err)
	}
	return p.RemovePresence(ctx, ch, clientID)
}

// Presence returns ch's clients from Config.Presence.
func (e *Engine) Presence(ctx context.Context, ch string) (map[string]*engine.ClientInfo, error) {
	p, err := e.presence(ctx)
	if err != nil {
		return nil, fmt.Errorf("presence %q: %w", ch, err)
	}
	return p.Presence(ctx, ch)
}

// PresenceStats counts ch's clients and users from Config.Presence.
func (e *Engine) PresenceStats(ctx context.Context, ch string) (engine.PresenceStats, error) {
	p, err := e.presence(ctx)
	if err != nil {
		return engine.PresenceStats{}, fmt.Errorf("presence stats %q: %w", ch, err)
	}
	return p.PresenceStats(ctx, ch)
}
