package redis

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/wire"
)

// presenceStore implements engine.PresenceManager for Engine and Presence.
// Entries expire by the Redis server's clock, so nodes' clocks need not
// agree; the scripts drop expired entries whenever a channel's presence is
// read, and the keys expire with their longest-lived entry.
type presenceStore struct {
	client goredis.UniversalClient
	keys   keyspace
	closed *atomic.Bool
}

func (p *presenceStore) presenceUsable(ctx context.Context) error {
	if p.closed.Load() {
		return engine.ErrClosed
	}
	return ctx.Err()
}

// AddPresence adds or refreshes info.Client in ch until ttl from now.
func (p *presenceStore) AddPresence(ctx context.Context, ch string, info *engine.ClientInfo, ttl time.Duration) error {
	if err := p.presenceUsable(ctx); err != nil {
		return fmt.Errorf("add presence %q: %w", ch, err)
	}
	if info == nil {
		return fmt.Errorf("add presence %q: nil client info", ch)
	}
	if ttl <= 0 {
		return fmt.Errorf("add presence %q: ttl %v is not positive", ch, ttl)
	}
	enc := wire.AppendClientInfo(nil, info)
	if err := presenceAddScript.Run(ctx, p.client, p.keys.presenceKeys(ch), info.Client, enc, millis(ttl)).Err(); err != nil {
		return fmt.Errorf("add presence %q: %w", ch, err)
	}
	return nil
}

// RemovePresence removes clientID from ch; removing an absent client is not
// an error.
func (p *presenceStore) RemovePresence(ctx context.Context, ch string, clientID string) error {
	if err := p.presenceUsable(ctx); err != nil {
		return fmt.Errorf("remove presence %q: %w", ch, err)
	}
	if err := presenceRemoveScript.Run(ctx, p.client, p.keys.presenceKeys(ch), clientID).Err(); err != nil {
		return fmt.Errorf("remove presence %q: %w", ch, err)
	}
	return nil
}

// Presence returns ch's unexpired clients across the cluster.
func (p *presenceStore) Presence(ctx context.Context, ch string) (map[string]*engine.ClientInfo, error) {
	if err := p.presenceUsable(ctx); err != nil {
		return nil, fmt.Errorf("presence %q: %w", ch, err)
	}
	vals, err := presenceReadScript.Run(ctx, p.client, p.keys.presenceKeys(ch), "0").StringSlice()
	if err != nil {
		return nil, fmt.Errorf("presence %q: %w", ch, err)
	}
	out := make(map[string]*engine.ClientInfo, len(vals)/2)
	for i := 0; i+1 < len(vals); i += 2 {
		info, err := wire.DecodeClientInfo([]byte(vals[i+1]))
		if err != nil {
			return nil, fmt.Errorf("presence %q: client %q: %w", ch, vals[i], err)
		}
		out[vals[i]] = info
	}
	return out, nil
}

// PresenceStats counts ch's unexpired clients and their distinct users
// across the cluster; anonymous clients together count as one user.
func (p *presenceStore) PresenceStats(ctx context.Context, ch string) (engine.PresenceStats, error) {
	if err := p.presenceUsable(ctx); err != nil {
		return engine.PresenceStats{}, fmt.Errorf("presence stats %q: %w", ch, err)
	}
	vals, err := presenceReadScript.Run(ctx, p.client, p.keys.presenceKeys(ch), "1").StringSlice()
	if err != nil {
		return engine.PresenceStats{}, fmt.Errorf("presence stats %q: %w", ch, err)
	}
	users := make(map[string]struct{}, len(vals))
	for _, v := range vals {
		u, err := wire.DecodeUser([]byte(v))
		if err != nil {
			return engine.PresenceStats{}, fmt.Errorf("presence stats %q: %w", ch, err)
		}
		users[u] = struct{}{}
	}
	return engine.PresenceStats{NumClients: len(vals), NumUsers: len(users)}, nil
}

// Presence is an engine.PresenceManager on Redis alone, for deployments
// that pair it with a broker keeping no presence of its own, such as the
// NATS engine. It uses the same keys as Engine, so both see one presence.
type Presence struct {
	presenceStore
	flag atomic.Bool
}

var _ engine.PresenceManager = (*Presence)(nil)

// NewPresence connects to Redis as opts says; only the connection and
// naming options matter.
func NewPresence(ctx context.Context, opts Config) (*Presence, error) {
	opts, client, err := opts.connect(ctx, "redis presence")
	if err != nil {
		return nil, err
	}
	p := &Presence{}
	p.presenceStore = presenceStore{client: client, keys: newKeyspace(opts.Prefix), closed: &p.flag}
	return p, nil
}

// Close closes the connections; later calls return engine.ErrClosed.
func (p *Presence) Close() error {
	if p.flag.Swap(true) {
		return nil
	}
	if err := p.client.Close(); err != nil {
		return fmt.Errorf("close redis presence: %w", err)
	}
	return nil
}
