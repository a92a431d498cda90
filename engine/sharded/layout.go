package sharded

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine/postgres"
)

// writeLayout records in every PostgreSQL shard which shard of how many
// it is (the shard_layout table of schema version 6), so that publish()
// called from SQL on a database refuses the channels of other shards
// instead of publishing where no node listens for them. It logs a change
// of layout, which moves channels between shards (docs/engines.md,
// "Adding shards").
func writeLayout(ctx context.Context, cfgs []postgres.Config) error {
	for i, c := range cfgs {
		schema := c.Schema
		if schema == "" {
			schema = postgres.DefaultSchema
		}
		table := pgx.Identifier{schema, "shard_layout"}.Sanitize()
		conn, err := pgx.Connect(ctx, c.DSN)
		if err != nil {
			return fmt.Errorf("sharded engine: record the layout in %w", wrap(err, i))
		}
		var oldShard, oldShards *int32
		err = conn.QueryRow(ctx, `WITH old AS (SELECT shard, shards FROM `+table+`),
			new AS (INSERT INTO `+table+` (shard, shards) VALUES ($1, $2)
			        ON CONFLICT (id) DO UPDATE SET shard = EXCLUDED.shard, shards = EXCLUDED.shards)
			SELECT (SELECT shard FROM old), (SELECT shards FROM old)`, i, len(cfgs)).Scan(&oldShard, &oldShards)
		_ = conn.Close(ctx)
		if err != nil {
			return fmt.Errorf("sharded engine: record the layout in %w", wrap(err, i))
		}
		if oldShards != nil && (int(*oldShard) != i || int(*oldShards) != len(cfgs)) && c.Logger != nil {
			c.Logger.Warn("sharded engine: this database was another shard: the shard list changed, so channels moved between shards and their history stayed behind",
				slog.Int("shard", i), slog.Int("shards", len(cfgs)),
				slog.Int("was_shard", int(*oldShard)), slog.Int("was_shards", int(*oldShards)))
		}
	}
	return nil
}
