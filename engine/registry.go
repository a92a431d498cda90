package engine

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
)

// Caps says what an engine kind keeps, so that a configuration can be
// checked (and refused) before any engine connects.
type Caps struct {
	// History: channels may keep history, positioning and recovery.
	History bool
	// Presence: the engine keeps presence itself.
	Presence bool
	// Maps: the engine is a MapBroker, so channels may be maps.
	Maps bool
	// Store: the engine keeps a Store (token revocations, blocked users,
	// user status) for the whole cluster.
	Store bool
	// RateLimits: the engine is a RateLimiter, keeping token buckets for
	// the whole cluster.
	RateLimits bool
	// ChannelStates: the engine keeps channel occupancy for the whole
	// cluster and makes channel state events (engine.ChannelStates).
	ChannelStates bool
	// Sharding: several stores of the kind may serve one cluster, each
	// channel kept by one of them (package sharded).
	Sharding bool
}

// Wiring is what an engine takes from the program rather than from its
// options: the node's identity, where it logs, and a presence store kept
// by another kind (for a kind whose Caps have no Presence).
type Wiring struct {
	NodeID   string
	Logger   *slog.Logger
	Presence PresenceManager
}

// Apply sets an engine's node id and logger from w, where w has them.
func (w Wiring) Apply(nodeID *string, logger **slog.Logger) {
	if w.NodeID != "" {
		*nodeID = w.NodeID
	}
	if w.Logger != nil {
		*logger = w.Logger
	}
}

// KindSpec describes an engine package to NewKind; O is the options of
// one store (one shard), the package's Config.
type KindSpec[O any] struct {
	// Name is how a configuration selects the kind ("postgres").
	Name string
	Caps Caps
	// Open makes one engine, not started, from one store's options.
	Open func(ctx context.Context, opts O, w Wiring) (Engine, error)
	// OpenPresence, when set, makes a presence store alone, for a kind
	// that keeps none (the Redis engine's presence for the NATS engine).
	OpenPresence func(ctx context.Context, opts O, w Wiring) (PresenceManager, error)
}

// Kind is an engine package as the registry knows it: its name, what it
// keeps and how to open it. Engine packages make theirs with NewKind.
type Kind struct {
	Name string
	Caps Caps
	// open and presence take the package's options as any, checked
	// against the type NewKind was given.
	open     func(ctx context.Context, opts any, w Wiring) (Engine, error)
	presence func(ctx context.Context, opts any, w Wiring) (PresenceManager, error)
}

// NewKind makes the Kind an engine package registers.
func NewKind[O any](s KindSpec[O]) Kind {
	k := Kind{Name: s.Name, Caps: s.Caps}
	k.open = func(ctx context.Context, opts any, w Wiring) (Engine, error) {
		o, err := kindOptions[O](s.Name, opts)
		if err != nil {
			return nil, err
		}
		return s.Open(ctx, o, w)
	}
	if s.OpenPresence != nil {
		k.presence = func(ctx context.Context, opts any, w Wiring) (PresenceManager, error) {
			o, err := kindOptions[O](s.Name, opts)
			if err != nil {
				return nil, err
			}
			return s.OpenPresence(ctx, o, w)
		}
	}
	return k
}

// kindOptions checks that opts are the options of kind name: a nil opts
// is the zero options.
func kindOptions[O any](name string, opts any) (O, error) {
	var o O
	if opts == nil {
		return o, nil
	}
	o, ok := opts.(O)
	if !ok {
		return o, fmt.Errorf("engine %s: options of type %T, want %T", name, opts, o)
	}
	return o, nil
}

// Open makes one engine of the kind, not started, from one store's
// options (the package's Config; nil for the defaults).
func (k Kind) Open(ctx context.Context, opts any, w Wiring) (Engine, error) {
	if k.open == nil {
		return nil, fmt.Errorf("engine %q: the kind was not made with NewKind", k.Name)
	}
	return k.open(ctx, opts, w)
}

// KeepsPresenceAlone reports whether OpenPresence can serve another kind.
func (k Kind) KeepsPresenceAlone() bool { return k.presence != nil }

// OpenPresence makes the kind's presence store alone, for a kind that
// keeps none.
func (k Kind) OpenPresence(ctx context.Context, opts any, w Wiring) (PresenceManager, error) {
	if k.presence == nil {
		return nil, fmt.Errorf("engine %q keeps no presence for other engines", k.Name)
	}
	return k.presence(ctx, opts, w)
}

// Registry is the list of engine kinds a program offers, built from an
// explicit list rather than by packages registering themselves, so that
// what a binary can run is read in one place.
type Registry struct {
	kinds []Kind
}

// NewRegistry returns the registry of kinds. Names must be distinct and
// not empty: the list is the program's own, so a mistake in it is a bug,
// and NewRegistry panics.
func NewRegistry(kinds ...Kind) Registry {
	seen := map[string]bool{}
	for _, k := range kinds {
		if k.Name == "" || seen[k.Name] {
			panic(fmt.Sprintf("engine: registry: kind name %q empty or listed twice", k.Name))
		}
		seen[k.Name] = true
	}
	return Registry{kinds: slices.Clone(kinds)}
}

// Lookup returns the kind called name.
func (r Registry) Lookup(name string) (Kind, bool) {
	for _, k := range r.kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// Names lists the kinds' names, sorted.
func (r Registry) Names() []string {
	out := make([]string, len(r.kinds))
	for i, k := range r.kinds {
		out[i] = k.Name
	}
	slices.Sort(out)
	return out
}
