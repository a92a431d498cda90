package nats

import (
	"context"

	"github.com/heraldhq/herald/engine"
)

// Kind is the NATS engine as the engine registry knows it: delivery only,
// with presence from another kind's store when the wiring brings one.
func Kind() engine.Kind {
	return engine.NewKind(engine.KindSpec[Config]{
		Name: "nats",
		Open: func(ctx context.Context, c Config, w engine.Wiring) (engine.Engine, error) {
			w.Apply(&c.NodeID, &c.Logger)
			if w.Presence != nil {
				c.Presence = w.Presence
			}
			return New(ctx, c)
		},
	})
}
