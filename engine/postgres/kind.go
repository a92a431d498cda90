package postgres

import (
	"context"

	"github.com/heraldhq/herald/engine"
)

// Kind is the PostgreSQL engine as the engine registry knows it: one
// store is one database (Config); several databases are shards.
func Kind() engine.Kind {
	return engine.NewKind(engine.KindSpec[Config]{
		Name: "postgres",
		Caps: engine.Caps{History: true, Presence: true, Maps: true, Store: true, Sharding: true, RateLimits: true, ChannelStates: true},
		Open: func(ctx context.Context, c Config, w engine.Wiring) (engine.Engine, error) {
			w.Apply(&c.NodeID, &c.Logger)
			return New(ctx, c)
		},
	})
}
