package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/engine/nats"
	"github.com/heraldhq/herald/engine/postgres"
	"github.com/heraldhq/herald/engine/redis"
)

// Engines is the registry of the engines engine.type selects. Adding an
// engine is its package (with a Kind) and its line here; when it takes
// options from the file, a field of EngineConfig under its name too.
func Engines() engine.Registry {
	return engine.NewRegistry(memory.Kind(), postgres.Kind(), redis.Kind(), nats.Kind())
}

// EngineSelection is the engine a file selects, ready to open: the kind,
// the options of each of its stores (one, or one per shard), and, for a
// kind that keeps no presence, the kind and store options of the engine
// that keeps it instead.
type EngineSelection struct {
	Kind          engine.Kind
	Stores        []any
	PresenceKind  *engine.Kind
	PresenceStore any
	// Composite: the presence store is paired with the engine by package
	// composite (engine.presence), rather than handed to the engine's
	// kind in its wiring (engine.nats.presence).
	Composite bool
}

// engineSection is implemented by the engine sections whose keys name
// several stores or files to read: they give the options of each store
// as the kind opens them. A section without it is the one store's
// options as they are.
type engineSection interface {
	stores() ([]any, error)
}

// presenceSection is implemented by the sections of engines that may keep
// presence in another engine's store: the name of that engine, or "".
type presenceSection interface {
	presenceFrom() string
}

// Select returns the engine the section selects. It reads the TLS files
// the section names.
func (e EngineConfig) Select() (EngineSelection, error) {
	reg := Engines()
	kind, ok := reg.Lookup(e.Type)
	if !ok {
		return EngineSelection{}, fmt.Errorf("engine.type: unknown engine %q (available: %s)", e.Type, strings.Join(reg.Names(), ", "))
	}
	sel := EngineSelection{Kind: kind}
	var err error
	if sel.Stores, err = e.stores(kind.Name); err != nil {
		return sel, err
	}
	key, from := e.presenceFrom(kind.Name)
	if from == "" {
		return sel, nil
	}
	pk, ok := reg.Lookup(from)
	if !ok || !pk.KeepsPresenceAlone() {
		return sel, fmt.Errorf("%s: engine %q keeps no presence for others (%s does)", key, from, enginesWith(engine.Kind.KeepsPresenceAlone))
	}
	stores, err := e.stores(pk.Name)
	if err != nil {
		return sel, err
	}
	sel.PresenceKind, sel.PresenceStore = &pk, stores[0]
	sel.Composite = key == "engine.presence"
	return sel, nil
}

// presenceFrom names the engine that keeps presence for the engine of
// kind, and the key that says so: engine.presence, or the engine's own
// section's (engine.nats.presence); "" when the engine keeps its own.
func (e EngineConfig) presenceFrom(kind string) (key, from string) {
	if e.Presence != "" && e.Presence != kind {
		return "engine.presence", e.Presence
	}
	if p, ok := e.section(kind).(presenceSection); ok && p.presenceFrom() != "" {
		return "engine." + kind + ".presence", p.presenceFrom()
	}
	return "", ""
}

// section returns the field of the section whose key is name, nil when
// the engine has none.
func (e EngineConfig) section(name string) any {
	v := reflect.ValueOf(e)
	if o, ok := optionByKey(v.Type(), name); ok {
		return v.FieldByIndex(o.index).Interface()
	}
	return nil
}

// stores are the store options of the engine called name.
func (e EngineConfig) stores(name string) ([]any, error) {
	switch s := e.section(name).(type) {
	case nil:
		return []any{nil}, nil
	case engineSection:
		return s.stores()
	default:
		return []any{s}, nil
	}
}

// engineCaps returns what the configured engine keeps, presence kept by
// another engine included.
func (c Config) engineCaps() (caps engine.Caps, ok bool) {
	reg := Engines()
	k, ok := reg.Lookup(c.Engine.Type)
	caps = k.Caps
	if _, from := c.Engine.presenceFrom(k.Name); ok && from != "" {
		pk, found := reg.Lookup(from)
		caps.Presence = found && pk.KeepsPresenceAlone()
	}
	return caps, ok
}

// stores are one postgres.Config per database.
func (p PostgresConfig) stores() ([]any, error) {
	var out []any
	for _, dsn := range p.DSNs() {
		c := p.Config
		c.DSN = dsn
		out = append(out, c)
	}
	return out, nil
}

// stores are one redis.Config per shard: each shard is its own deployment
// (standalone or Sentinel); credentials, TLS and the rest are the
// section's.
func (r RedisConfig) stores() ([]any, error) {
	tls, err := r.TLS.Config()
	if err != nil {
		return nil, fmt.Errorf("engine.redis.tls: %w", err)
	}
	separate, sentinelTLS, err := r.SentinelTLS.separate()
	if err != nil {
		return nil, err
	}
	var out []any
	for _, s := range r.RedisShards() {
		c := r.Config
		c.Addrs, c.SentinelMaster, c.DB, c.TLS = s.Addrs, s.SentinelMaster, s.DB, tls
		c.SeparateSentinelTLS, c.SentinelTLS = separate, sentinelTLS
		out = append(out, c)
	}
	return out, nil
}

// stores is the one nats.Config, with its TLS files read.
func (n NATSConfig) stores() ([]any, error) {
	tls, err := n.TLS.Config()
	if err != nil {
		return nil, fmt.Errorf("engine.nats.tls: %w", err)
	}
	c := n.Config
	c.TLS = tls
	return []any{c}, nil
}

func (n NATSConfig) presenceFrom() string {
	if n.Presence == "none" {
		return ""
	}
	return n.Presence
}

// enginesWith names the registered engines that has accepts, for messages
// that suggest one: "memory, postgres or redis".
func enginesWith(has func(engine.Kind) bool) string {
	reg := Engines()
	var names []string
	for _, n := range reg.Names() {
		if k, _ := reg.Lookup(n); has(k) {
			names = append(names, n)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
