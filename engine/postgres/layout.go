package postgres

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
)

// RecordShard records in the database which shard of how many it is (the
// shard_layout table of schema version 6), so that publish() called from
// SQL refuses the channels of other shards instead of publishing where no
// node listens for them. The sharded engine calls it on every shard once
// all have started (the schema is migrated by then). It logs a change of
// layout, which moves channels between shards (docs/engines.md, "Adding
// shards").
func (e *Engine) RecordShard(ctx context.Context, shard, shards int) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return err
	}
	table := pgx.Identifier{e.opts.Schema, "shard_layout"}.Sanitize()
	var oldShard, oldShards *int32
	err := e.qPool.QueryRow(ctx, `WITH old AS (SELECT shard, shards FROM `+table+`),
		new AS (INSERT INTO `+table+` (shard, shards) VALUES ($1, $2)
		        ON CONFLICT (id) DO UPDATE SET shard = EXCLUDED.shard, shards = EXCLUDED.shards)
		SELECT (SELECT shard FROM old), (SELECT shards FROM old)`, shard, shards).Scan(&oldShard, &oldShards)
	if err != nil {
		return fmt.Errorf("postgres engine: record the shard layout: %w", err)
	}
	if oldShards != nil && (int(*oldShard) != shard || int(*oldShards) != shards) {
		e.log.Warn("sharded engine: this database was another shard: the shard list changed, so channels moved between shards and their history stayed behind",
			slog.Int("shard", shard), slog.Int("shards", shards),
			slog.Int("was_shard", int(*oldShard)), slog.Int("was_shards", int(*oldShards)))
	}
	return nil
}
