package server

import (
	"context"
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
)

// redisOptions converts engine.redis for the Redis engine and presence.
func redisOptions(r config.RedisConfig, node string, log *slog.Logger) redis.Options {
	return redis.Options{
		Addrs: r.Addrs(), SentinelMaster: r.SentinelMaster, SentinelUsername: r.SentinelUsername,
		SentinelPassword: r.SentinelPassword, Cluster: r.Cluster, Username: r.Username, Password: r.Password,
		DB: r.DB, Prefix: r.Prefix, PubSubShards: r.PubSubShards, PoolSize: r.PoolSize, NodeID: node, Logger: log,
		MinReplicas: r.MinReplicas, ReplicaTimeout: r.ReplicaTimeout,
	}
}

// newEngine connects the configured engine.
func newEngine(cfg config.Config, node string, log *slog.Logger) (engine.Engine, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch cfg.Engine.Type {
	case "postgres":
		p := cfg.Engine.Postgres
		e, err := postgres.New(ctx, postgres.Options{
			DSN: p.DSN, ListenDSN: p.ListenDSN, Schema: p.Schema, NodeID: node,
			PoolSize: p.PoolSize, QueryPoolSize: p.QueryPoolSize,
			SynchronousCommitOff: p.SynchronousCommitOff, SkipMigrate: p.SkipMigrate, Logger: log,
			ListenerPing: p.ListenerPing, WriteTimeout: p.WriteTimeout,
		})
		if err != nil {
			return nil, fmt.Errorf("engine postgres: %w", err)
		}
		return e, nil
	case "redis":
		e, err := redis.New(ctx, redisOptions(cfg.Engine.Redis, node, log))
		if err != nil {
			return nil, fmt.Errorf("engine redis at %s: %w", strings.Join(cfg.Engine.Redis.Addrs(), ","), err)
		}
		return e, nil
	case "nats":
		opts := nats.Options{URL: cfg.Engine.NATS.URL, Prefix: cfg.Engine.NATS.Prefix, NodeID: node, Logger: log}
		if cfg.Engine.NATS.Presence == "redis" {
			p, err := redis.NewPresence(ctx, redisOptions(cfg.Engine.Redis, node, log))
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
	return memory.New(memory.Options{}), nil
}
