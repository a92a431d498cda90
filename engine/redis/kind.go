package redis

import (
	"context"

	"github.com/heraldhq/herald/engine"
)

// Kind is the Redis engine as the engine registry knows it: one store is
// one deployment (standalone, Sentinel or Cluster; Config); several
// deployments are shards. It also keeps presence alone, for the NATS
// engine.
func Kind() engine.Kind {
	return engine.NewKind(engine.KindSpec[Config]{
		Name: "redis",
		Caps: engine.Caps{History: true, Presence: true, Maps: true, Store: true, Sharding: true, RateLimits: true, ChannelStates: true},
		Open: func(ctx context.Context, c Config, w engine.Wiring) (engine.Engine, error) {
			w.Apply(&c.NodeID, &c.Logger)
			return New(ctx, c)
		},
		OpenPresence: func(ctx context.Context, c Config, w engine.Wiring) (engine.PresenceManager, error) {
			w.Apply(&c.NodeID, &c.Logger)
			return NewPresence(ctx, c)
		},
	})
}
