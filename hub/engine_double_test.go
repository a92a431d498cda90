package hub_test

import (
	"context"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/memory"
)

// lossyEngine is the real memory engine whose deliveries to the hub pass
// through a filter that loses the publications drop selects, as a broker
// that lost a message on the way to this node would. History keeps them,
// so clients can recover.
type lossyEngine struct {
	*memory.Engine
	drop func(ch string, sp engine.StreamPosition) bool
}

func (e *lossyEngine) Start(ctx context.Context, h engine.Handler) error {
	return e.Engine.Start(ctx, lossyHandler{Handler: h, drop: e.drop})
}

type lossyHandler struct {
	engine.Handler
	drop func(ch string, sp engine.StreamPosition) bool
}

func (h lossyHandler) HandlePublication(ch string, pub *engine.Publication, sp engine.StreamPosition) {
	if h.drop(ch, sp) {
		return
	}
	h.Handler.HandlePublication(ch, pub, sp)
}
