package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/heraldhq/herald/engine/nats"
	"github.com/heraldhq/herald/engine/postgres"
	"github.com/heraldhq/herald/engine/redis"
)

// TestEngineSectionsAreEngines: every section of engine (every key but
// type and presence, which name engines) is the options of a registered engine of that name, so a section
// cannot drift from the registry.
func TestEngineSectionsAreEngines(t *testing.T) {
	reg := Engines()
	sections := 0
	for _, o := range options(reflect.TypeOf(EngineConfig{})) {
		if o.key == "type" || o.key == "presence" {
			continue
		}
		sections++
		if _, ok := reg.Lookup(o.key); !ok {
			t.Errorf("engine.%s is no registered engine (registered: %v)", o.key, reg.Names())
		}
	}
	if sections == 0 {
		t.Fatal("engine has no sections")
	}
}

// TestEngineSelect: what a file selects reaches the engines as their own
// options, one per store, with the section's options on every shard and
// presence from another engine where the file says so.
func TestEngineSelect(t *testing.T) {
	sel := func(yaml string) EngineSelection {
		t.Helper()
		cfg, err := Parse([]byte(yaml))
		if err != nil {
			t.Fatalf("%q: %v", yaml, err)
		}
		s, err := cfg.Engine.Select()
		if err != nil {
			t.Fatalf("%q: Select: %v", yaml, err)
		}
		return s
	}

	s := sel("engine: {type: memory}")
	if s.Kind.Name != "memory" || len(s.Stores) != 1 || s.Stores[0] != nil || s.PresenceKind != nil {
		t.Errorf("memory: %+v", s)
	}

	s = sel("engine: {type: postgres, postgres: {shards: ['postgres://a/x', 'postgres://b/x'], schema: hs, pool_size: 3, logical: {enabled: true}}}")
	if s.Kind.Name != "postgres" || !s.Kind.Caps.Sharding || len(s.Stores) != 2 {
		t.Fatalf("postgres: %+v", s)
	}
	for i, dsn := range []string{"postgres://a/x", "postgres://b/x"} {
		c := s.Stores[i].(postgres.Config)
		if c.DSN != dsn || c.Schema != "hs" || c.PoolSize != 3 || !c.Logical.Enabled || c.WriteTimeout != postgres.DefaultWriteTimeout {
			t.Errorf("postgres shard %d: %+v", i, c)
		}
	}

	s = sel("engine: {type: redis, redis: {address: [a:1, b:1], prefix: p, password: pw, min_replicas: 1}}")
	if len(s.Stores) != 2 {
		t.Fatalf("redis: %+v", s)
	}
	for i, addr := range []string{"a:1", "b:1"} {
		c := s.Stores[i].(redis.Config)
		if len(c.Addrs) != 1 || c.Addrs[0] != addr || c.Prefix != "p" || c.Password != "pw" || c.MinReplicas != 1 || c.PubSubShards != redis.DefaultPubSubShards {
			t.Errorf("redis shard %d: %+v", i, c)
		}
	}

	s = sel("engine: {type: nats, nats: {url: 'nats://n:4222', presence: redis}, redis: {address: r:1, db: 2}}")
	if c := s.Stores[0].(nats.Config); len(s.Stores) != 1 || c.URL != "nats://n:4222" || c.Prefix != nats.DefaultPrefix {
		t.Errorf("nats: %+v", s)
	}
	if s.PresenceKind == nil || s.PresenceKind.Name != "redis" {
		t.Fatalf("nats with presence: redis: presence kind %+v", s.PresenceKind)
	}
	if c := s.PresenceStore.(redis.Config); c.Addrs[0] != "r:1" || c.DB != 2 {
		t.Errorf("nats presence store: %+v", c)
	}
	if s.Composite {
		t.Errorf("engine.nats.presence: the presence store goes to the NATS engine's wiring, not to a composite")
	}
	s = sel("engine: {type: nats, presence: redis, redis: {address: r:1}}")
	if s.PresenceKind == nil || s.PresenceKind.Name != "redis" || !s.Composite {
		t.Errorf("nats with engine.presence: redis: presence kind %+v, composite %v", s.PresenceKind, s.Composite)
	}
	if s = sel("engine: {type: redis, presence: redis}"); s.PresenceKind != nil {
		t.Errorf("redis with engine.presence: redis is the engine's own presence: presence kind %+v", s.PresenceKind)
	}
	if s = sel("engine: {type: nats}"); s.PresenceKind != nil {
		t.Errorf("nats without presence: presence kind %+v", s.PresenceKind)
	}

	cfg := Default()
	cfg.Engine.Type = "mysql"
	if _, err := cfg.Engine.Select(); err == nil || !strings.Contains(err.Error(), `unknown engine "mysql" (available: memory, nats, postgres, redis)`) {
		t.Errorf("unknown engine: %v", err)
	}
}
