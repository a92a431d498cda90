package sharded

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"

	"github.com/heraldhq/herald/engine"
)

// Open makes the engine of kind over stores, the options of each store
// in shard order: the kind's own engine for one store, an Engine over one
// engine per store for several (with map operations when the kind keeps
// maps). Every shard gets the node id of w (a random one when it is
// empty), since a node has one identity on every shard, and a logger that
// names the shard. When a shard cannot be made, the ones already made are
// closed and the error names the shard.
//
// Shard engines may take part in the layout through two optional methods,
// so that this package needs none of them by name:
//
//   - Deployment(ctx) (string, error) names the store the shard reaches
//     (the Redis engine's server and prefix): two shards with the same
//     non-empty deployment would share their data, and are refused.
//   - RecordShard(ctx, shard, shards int) error, called on every shard
//     once all have started, records the layout in the store (the
//     PostgreSQL engine's shard_layout table, which publish() from SQL
//     reads).
func Open(ctx context.Context, kind engine.Kind, stores []any, w engine.Wiring) (engine.Engine, error) {
	switch {
	case len(stores) == 0:
		return nil, errors.New("sharded engine: no shards")
	case len(stores) == 1:
		return kind.Open(ctx, stores[0], w)
	case !kind.Caps.Sharding:
		return nil, fmt.Errorf("engine %s: %d stores listed, but it cannot be sharded", kind.Name, len(stores))
	}
	e, err := build(ctx, kind, stores, w)
	if err != nil {
		return nil, err
	}
	return WithMaps(e), nil
}

// deployer and layoutRecorder are the optional methods of shard engines
// that Open's comment describes.
type (
	deployer interface {
		Deployment(ctx context.Context) (string, error)
	}
	layoutRecorder interface {
		RecordShard(ctx context.Context, shard, shards int) error
	}
)

// build makes one engine per store and checks that no two are one store.
func build(ctx context.Context, kind engine.Kind, stores []any, w engine.Wiring) (*Engine, error) {
	if w.NodeID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
		w.NodeID = "node-" + hex.EncodeToString(b[:])
	}
	shards := make([]engine.Engine, 0, len(stores))
	closeAll := func() {
		for _, s := range shards {
			_ = s.Close()
		}
	}
	for i, opts := range stores {
		sw := w
		sw.Logger = shardLogger(w.Logger, i)
		s, err := kind.Open(ctx, opts, sw)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("sharded engine: connect %w", wrap(err, i))
		}
		shards = append(shards, s)
	}
	if err := distinct(ctx, kind.Name, shards); err != nil {
		closeAll()
		return nil, err
	}
	e, err := New(shards)
	if err != nil {
		closeAll()
		return nil, err
	}
	e.started = func(ctx context.Context) error {
		for i, s := range shards {
			if r, ok := s.(layoutRecorder); ok {
				if err := r.RecordShard(ctx, i, len(shards)); err != nil {
					return fmt.Errorf("sharded engine: record the layout in %w", wrap(err, i))
				}
			}
		}
		return nil
	}
	return e, nil
}

// distinct refuses two shards that reach one store (as happens when the
// Sentinels of one set are listed as shards of their own): they would
// share their streams and control channels, every control message
// delivered once per shard.
func distinct(ctx context.Context, kind string, shards []engine.Engine) error {
	seen := map[string]int{}
	for i, s := range shards {
		d, ok := s.(deployer)
		if !ok {
			continue
		}
		id, err := d.Deployment(ctx)
		if err != nil {
			return fmt.Errorf("sharded engine: %w", wrap(err, i))
		}
		if j, dup := seen[id]; dup && id != "" {
			return fmt.Errorf("sharded engine: shards %d and %d are one %s store (deployment %q): "+
				"each shard must be a store of its own; the Sentinels of one set belong in one shard's addresses", j, i, kind, id)
		}
		seen[id] = i
	}
	return nil
}

// shardLogger names the shard in every record of its engine's logger, so
// that a log says which database or server is in trouble.
func shardLogger(l *slog.Logger, shard int) *slog.Logger {
	if l == nil {
		return nil
	}
	return l.With(slog.Int("shard", shard))
}
