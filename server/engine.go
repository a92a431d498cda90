package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/engine/nats"
	"github.com/heraldhq/herald/engine/postgres"
	"github.com/heraldhq/herald/engine/redis"
)

// EngineConfig selects the engine and holds each engine's settings.
type EngineConfig struct {
	// Type is memory (one node), postgres, redis or nats.
	Type     string         `yaml:"type"`
	Postgres PostgresConfig `yaml:"postgres"`
	Redis    RedisConfig    `yaml:"redis"`
	NATS     NATSConfig     `yaml:"nats"`
}

// PostgresConfig connects the PostgreSQL engine (docs/postgres.md).
type PostgresConfig struct {
	// DSN is the database to publish to and read history and presence
	// from; it may go through a transaction-mode pooler.
	DSN string `yaml:"dsn"`
	// ListenDSN, when set, is used for the node's one LISTEN connection,
	// which must be a direct session connection (not through a
	// transaction-mode pooler).
	ListenDSN string `yaml:"listen_dsn"`
	// Schema holds Herald's tables and functions ("herald").
	Schema string `yaml:"schema"`
	// PoolSize is the publishing connections per node (2); QueryPoolSize
	// the connections for history and presence reads (4).
	PoolSize      int `yaml:"pool_size"`
	QueryPoolSize int `yaml:"query_pool_size"`
	// SynchronousCommitOff trades the last few milliseconds of
	// publications on a database crash for throughput (off).
	SynchronousCommitOff bool `yaml:"synchronous_commit_off"`
	// SkipMigrate does not create or migrate the schema on start; run
	// `herald migrate` (or its SQL) yourself.
	SkipMigrate bool `yaml:"skip_migrate"`
	// ListenerPing bounds how long a listening connection that died
	// silently (a NAT or load balancer that dropped it without a reset)
	// goes unnoticed: a quiet connection is pinged after this long and
	// given as long again to answer (5s).
	ListenerPing Duration `yaml:"listener_ping"`
	// WriteTimeout bounds one publishing transaction, each database read
	// made for delivery and each listener reconnect attempt (10s).
	WriteTimeout Duration `yaml:"write_timeout"`
}

// RedisConfig connects the Redis engine: standalone, Sentinel or Cluster.
type RedisConfig struct {
	// Address is host:port of a standalone server; Addresses lists
	// Sentinel or Cluster seed addresses.
	Address          string   `yaml:"address"`
	Addresses        []string `yaml:"addresses"`
	SentinelMaster   string   `yaml:"sentinel_master"`
	SentinelUsername string   `yaml:"sentinel_username"`
	SentinelPassword string   `yaml:"sentinel_password"`
	Cluster          bool     `yaml:"cluster"`
	Username         string   `yaml:"username"`
	Password         string   `yaml:"password"`
	DB               int      `yaml:"db"`
	// Prefix starts every key and pub/sub channel ("herald").
	Prefix string `yaml:"prefix"`
	// PubSubShards spreads channel subscriptions over this many
	// connections (4).
	PubSubShards int `yaml:"pubsub_shards"`
	PoolSize     int `yaml:"pool_size"`
	// MinReplicas makes a publication with history acknowledged only once
	// that many replicas have it (Redis WAIT, at most ReplicaTimeout), so
	// that a Sentinel failover cannot lose it (0: no wait).
	MinReplicas    int      `yaml:"min_replicas"`
	ReplicaTimeout Duration `yaml:"replica_timeout"`
}

func (r RedisConfig) addrs() []string {
	if len(r.Addresses) > 0 {
		return r.Addresses
	}
	if r.Address != "" {
		return []string{r.Address}
	}
	return []string{"127.0.0.1:6379"}
}

func (r RedisConfig) options(node string, log *slog.Logger) redis.Config {
	return redis.Config{
		Addrs: r.addrs(), SentinelMaster: r.SentinelMaster, SentinelUsername: r.SentinelUsername,
		SentinelPassword: r.SentinelPassword, Cluster: r.Cluster, Username: r.Username, Password: r.Password,
		DB: r.DB, Prefix: r.Prefix, PubSubShards: r.PubSubShards, PoolSize: r.PoolSize, NodeID: node, Logger: log,
		MinReplicas: r.MinReplicas, ReplicaTimeout: r.ReplicaTimeout.D(),
	}
}

// NATSConfig connects the NATS engine, which carries publications between
// nodes but keeps no history.
type NATSConfig struct {
	URL    string `yaml:"url"`
	Prefix string `yaml:"prefix"`
	// Presence is none (presence off) or redis (presence kept in the
	// Redis server of engine.redis).
	Presence string `yaml:"presence"`
}

// engines lists the engines and what each keeps.
var engines = map[string]struct{ history, presence bool }{
	"memory":   {history: true, presence: true},
	"postgres": {history: true, presence: true},
	"redis":    {history: true, presence: true},
	"nats":     {history: false, presence: false},
}

// engineCaps returns what the configured engine keeps.
func (c Config) engineCaps() (history, presence, ok bool) {
	e, ok := engines[c.Engine.Type]
	presence = e.presence || (c.Engine.Type == "nats" && c.Engine.NATS.Presence == "redis")
	return e.history, presence, ok
}

// newEngine connects the configured engine. The engine's node id, which the
// hub takes as the node's only identity, is base (the node's name and pid)
// with a random suffix: unique even when a restarted container's process
// gets the same pid again.
func newEngine(cfg Config, base string, log *slog.Logger) (engine.Engine, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	node := nodeID(base)
	switch cfg.Engine.Type {
	case "postgres":
		p := cfg.Engine.Postgres
		e, err := postgres.New(ctx, postgres.Config{
			DSN: p.DSN, ListenDSN: p.ListenDSN, Schema: p.Schema, NodeID: node,
			PoolSize: p.PoolSize, QueryPoolSize: p.QueryPoolSize,
			SynchronousCommitOff: p.SynchronousCommitOff, SkipMigrate: p.SkipMigrate, Logger: log,
			ListenerPing: p.ListenerPing.D(), WriteTimeout: p.WriteTimeout.D(),
		})
		if err != nil {
			return nil, fmt.Errorf("engine postgres: %w", err)
		}
		return e, nil
	case "redis":
		e, err := redis.New(ctx, cfg.Engine.Redis.options(node, log))
		if err != nil {
			return nil, fmt.Errorf("engine redis at %s: %w", strings.Join(cfg.Engine.Redis.addrs(), ","), err)
		}
		return e, nil
	case "nats":
		opts := nats.Config{URL: cfg.Engine.NATS.URL, Prefix: cfg.Engine.NATS.Prefix, NodeID: node, Logger: log}
		if cfg.Engine.NATS.Presence == "redis" {
			p, err := redis.NewPresence(ctx, cfg.Engine.Redis.options(node, log))
			if err != nil {
				return nil, fmt.Errorf("engine nats: presence in redis at %s: %w", strings.Join(cfg.Engine.Redis.addrs(), ","), err)
			}
			opts.Presence = p
		}
		e, err := nats.New(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("engine nats at %s: %w", cfg.Engine.NATS.URL, err)
		}
		return e, nil
	}
	return memory.New(memory.Config{NodeID: node}), nil
}

// nodeID makes a node id from base: the characters every engine accepts in
// an id (letters, digits, "_.:-"), at most 48 of them, and 8 random hex
// digits.
func nodeID(base string) string {
	var b strings.Builder
	for _, r := range base {
		if b.Len() == 48 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("_.:-", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:]) // crypto/rand.Read never fails since Go 1.24
	return b.String() + "-" + hex.EncodeToString(suffix[:])
}
