package memory

import (
	"context"

	"github.com/heraldhq/herald/engine"
)

// Kind is the memory engine as the engine registry knows it: one node,
// everything in process, nothing to connect to.
func Kind() engine.Kind {
	return engine.NewKind(engine.KindSpec[Config]{
		Name: "memory",
		Caps: engine.Caps{History: true, Presence: true, Maps: true, Store: true, RateLimits: true, ChannelStates: true},
		Open: func(_ context.Context, c Config, w engine.Wiring) (engine.Engine, error) {
			if w.NodeID != "" {
				c.NodeID = w.NodeID
			}
			return New(c), nil
		},
	})
}
