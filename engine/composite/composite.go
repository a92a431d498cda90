// Package composite pairs the broker of one engine with the presence store
// of another: publications, history, join/leave, control messages, map
// state and the Store from the first, presence from the second. It is
// what a deployment gets when it names a broker and a presence manager
// separately, as Centrifugo's 'broker' and 'presence_manager' sections do
// (Centrifugo v6.9.1 internal/app/engine.go: the broker and the presence
// manager are set on the node each on its own; map state comes from
// neither). docs/engines.md says when to pair engines this way.
package composite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/engine"
)

// Engine is a broker engine with its presence kept by another store. The
// broker engine's methods other than presence are its own, promoted; the
// optional ones the hub and server look for (maps, Store, ForgetNode,
// Collectors) are found through Unwrap or forwarded here.
type Engine struct {
	engine.Engine
	presence engine.PresenceManager
}

// New returns broker with presence kept by p. The Engine owns both: Close
// closes the broker, then p when p is an io.Closer.
func New(broker engine.Engine, p engine.PresenceManager) *Engine {
	return &Engine{Engine: broker, presence: p}
}

// Unwrap is the broker engine, where engine.MapsOf and engine.StoreOf find
// map state and the Store.
func (e *Engine) Unwrap() engine.Engine { return e.Engine }

// AddPresence adds or refreshes info.Client in ch in the presence store.
func (e *Engine) AddPresence(ctx context.Context, ch string, info *engine.ClientInfo, ttl time.Duration) error {
	return e.presence.AddPresence(ctx, ch, info, ttl)
}

// RemovePresence removes clientID from ch in the presence store.
func (e *Engine) RemovePresence(ctx context.Context, ch string, clientID string) error {
	return e.presence.RemovePresence(ctx, ch, clientID)
}

// Presence returns ch's clients from the presence store.
func (e *Engine) Presence(ctx context.Context, ch string) (map[string]*engine.ClientInfo, error) {
	return e.presence.Presence(ctx, ch)
}

// PresenceStats counts ch's clients and users in the presence store.
func (e *Engine) PresenceStats(ctx context.Context, ch string) (engine.PresenceStats, error) {
	return e.presence.PresenceStats(ctx, ch)
}

// ForgetNode drops what a dead node owned in either part, for the parts
// that keep records by node (engine.NodeForgetter); the others keep none.
func (e *Engine) ForgetNode(ctx context.Context, node string) error {
	var errs []error
	for _, part := range []any{e.Engine, e.presence} {
		if f, ok := part.(engine.NodeForgetter); ok {
			if err := f.ForgetNode(ctx, node); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Collectors are both parts' Prometheus collectors, for the server to
// register.
func (e *Engine) Collectors() []prometheus.Collector {
	var out []prometheus.Collector
	for _, part := range []any{e.Engine, e.presence} {
		if c, ok := part.(interface{ Collectors() []prometheus.Collector }); ok {
			out = append(out, c.Collectors()...)
		}
	}
	return out
}

// Close closes the broker engine and then the presence store; the errors
// of both are returned.
func (e *Engine) Close() error {
	err := e.Engine.Close()
	if c, ok := e.presence.(io.Closer); ok {
		if perr := c.Close(); perr != nil {
			err = errors.Join(err, fmt.Errorf("presence store: %w", perr))
		}
	}
	return err
}
