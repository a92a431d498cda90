package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/engine/nats"
	"github.com/heraldhq/herald/engine/postgres"
	"github.com/heraldhq/herald/engine/redis"
	"github.com/heraldhq/herald/engine/sharded"
)

// redisOptions converts engine.redis for the Redis engine and presence,
// reading its TLS files.
func redisOptions(r config.RedisConfig, node string, log *slog.Logger) (redis.Config, error) {
	tls, err := r.TLS.Config()
	if err != nil {
		return redis.Config{}, fmt.Errorf("engine.redis.tls: %w", err)
	}
	return redis.Config{
		Addrs: r.Addrs(), SentinelMaster: r.SentinelMaster, SentinelUsername: r.SentinelUsername,
		SentinelPassword: r.SentinelPassword, Cluster: r.Cluster, Username: r.Username, Password: r.Password,
		DB: r.DB, Prefix: r.Prefix, PubSubShards: r.PubSubShards, PoolSize: r.PoolSize, NodeID: node, Logger: log,
		MinReplicas: r.MinReplicas, ReplicaTimeout: r.ReplicaTimeout, TLS: tls,
	}, nil
}

// newEngine connects the configured engine.
func newEngine(cfg config.Config, base string, log *slog.Logger) (engine.Engine, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	node := nodeID(base)
	switch cfg.Engine.Type {
	case "postgres":
		p := cfg.Engine.Postgres
		shards := make([]postgres.Config, 0, len(p.DSNs()))
		for _, dsn := range p.DSNs() {
			shards = append(shards, postgres.Config{
				DSN: dsn, ListenDSN: p.ListenDSN, Schema: p.Schema, NodeID: node,
				PoolSize: p.PoolSize, QueryPoolSize: p.QueryPoolSize,
				SynchronousCommitOff: p.SynchronousCommitOff, SkipMigrate: p.SkipMigrate, Logger: log,
				ListenerPing: p.ListenerPing, WriteTimeout: p.WriteTimeout,
				Logical: postgres.LogicalConfig{Enabled: p.Logical.Enabled, DSN: p.Logical.DSN, Slot: p.Logical.Slot,
					MaxRetainedBytes: p.Logical.MaxRetainedBytes, CheckInterval: p.Logical.CheckInterval},
			})
		}
		if len(shards) > 1 {
			e, err := sharded.NewPostgres(ctx, shards)
			if err != nil {
				return nil, fmt.Errorf("engine postgres: %w", err)
			}
			return sharded.WithMaps(e), nil
		}
		e, err := postgres.New(ctx, shards[0])
		if err != nil {
			return nil, fmt.Errorf("engine postgres: %w", err)
		}
		return e, nil
	case "redis":
		opts, err := redisOptions(cfg.Engine.Redis, node, log)
		if err != nil {
			return nil, err
		}
		// Each shard is its own deployment (standalone or Sentinel);
		// credentials, TLS and the rest are engine.redis's.
		list := cfg.Engine.Redis.RedisShards()
		shards := make([]redis.Config, len(list))
		for i, s := range list {
			shards[i] = opts
			shards[i].Addrs, shards[i].SentinelMaster, shards[i].DB = s.Addrs, s.SentinelMaster, s.DB
		}
		if len(shards) > 1 {
			e, err := sharded.NewRedis(ctx, shards)
			if err != nil {
				return nil, fmt.Errorf("engine redis: %w", err)
			}
			return sharded.WithMaps(e), nil
		}
		e, err := redis.New(ctx, shards[0])
		if err != nil {
			return nil, fmt.Errorf("engine redis at %s: %w", strings.Join(shards[0].Addrs, ","), err)
		}
		return e, nil
	case "nats":
		tls, err := cfg.Engine.NATS.TLS.Config()
		if err != nil {
			return nil, fmt.Errorf("engine.nats.tls: %w", err)
		}
		opts := nats.Config{URL: cfg.Engine.NATS.URL, Prefix: cfg.Engine.NATS.Prefix, NodeID: node, Logger: log, TLS: tls}
		if cfg.Engine.NATS.Presence == "redis" {
			ropts, err := redisOptions(cfg.Engine.Redis, node, log)
			if err != nil {
				return nil, err
			}
			p, err := redis.NewPresence(ctx, ropts)
			if err != nil {
				return nil, fmt.Errorf("engine nats: presence in redis at %s: %w", strings.Join(cfg.Engine.Redis.Addrs(), ","), err)
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
