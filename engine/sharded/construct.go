package sharded

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/postgres"
	"github.com/heraldhq/herald/engine/redis"
)

// NewPostgres connects one PostgreSQL engine per configuration, in shard
// order, and returns them as one engine. Every shard gets the NodeID of
// the first configuration (a random one when it is empty), since a node
// has one identity on every shard. When any shard cannot be reached, the
// ones already connected are closed and the error names the shard.
//
// It also records in each database which shard of how many it is, so that
// publish() from SQL refuses channels of other shards.
func NewPostgres(ctx context.Context, shards []postgres.Config) (*Engine, error) {
	e, err := build(shards, func(c postgres.Config) string { return c.NodeID },
		func(c *postgres.Config, id string, shard int) { c.NodeID, c.Logger = id, shardLogger(c.Logger, shard) },
		func(c postgres.Config) (engine.Engine, error) { return postgres.New(ctx, c) })
	if err != nil {
		return nil, err
	}
	if len(shards) > 1 {
		// After Start, which migrates the schemas.
		e.started = func(ctx context.Context) error { return writeLayout(ctx, shards) }
	}
	return e, nil
}

// NewRedis is NewPostgres for Redis: one Redis engine (standalone,
// Sentinel or Cluster) per configuration.
//
// Two shards on one Redis server with one prefix would share their streams
// and control channels (every control message delivered once per shard):
// NewRedis refuses them, naming both, as happens when the Sentinels of one
// set are listed as shards of their own.
func NewRedis(ctx context.Context, shards []redis.Config) (*Engine, error) {
	e, err := build(shards, func(c redis.Config) string { return c.NodeID },
		func(c *redis.Config, id string, shard int) { c.NodeID, c.Logger = id, shardLogger(c.Logger, shard) },
		func(c redis.Config) (engine.Engine, error) { return redis.New(ctx, c) })
	if err != nil || len(shards) < 2 {
		return e, err
	}
	seen := map[string]int{}
	for i, s := range e.shards {
		d, err := s.(*redis.Engine).Deployment(ctx)
		if err != nil {
			_ = e.Close()
			return nil, fmt.Errorf("sharded engine: %w", wrap(err, i))
		}
		if j, dup := seen[d]; dup && d != "" {
			_ = e.Close()
			return nil, fmt.Errorf("sharded engine: shards %d and %d are one Redis server with one prefix (run_id and prefix %q): "+
				"each shard must be a store of its own; the Sentinels of one set belong in one shard's addresses", j, i, d)
		}
		seen[d] = i
	}
	return e, nil
}

// shardLogger names the shard in every record of its engine's logger, so
// that a log says which database or server is in trouble.
func shardLogger(l *slog.Logger, shard int) *slog.Logger {
	if l == nil {
		return nil
	}
	return l.With(slog.Int("shard", shard))
}

// build makes one engine per configuration with a shared node id and a
// logger that names the shard.
func build[C any](cfgs []C, id func(C) string, set func(c *C, id string, shard int), mk func(C) (engine.Engine, error)) (*Engine, error) {
	if len(cfgs) == 0 {
		return nil, errors.New("sharded engine: no shards")
	}
	node := id(cfgs[0])
	if node == "" {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
		node = "node-" + hex.EncodeToString(b[:])
	}
	engines := make([]engine.Engine, 0, len(cfgs))
	for i, c := range cfgs {
		set(&c, node, i)
		e, err := mk(c)
		if err != nil {
			for _, done := range engines {
				_ = done.Close()
			}
			return nil, fmt.Errorf("sharded engine: connect %w", wrap(err, i))
		}
		engines = append(engines, e)
	}
	return New(engines)
}
