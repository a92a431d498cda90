package redis

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
)

// TestConformance runs the shared engine suite. All engines of one run
// share a prefix, so they form one cluster, as the suite expects. The
// Reconnect test's fault kills the subscribing node's pub/sub
// connections.
func TestConformance(t *testing.T) {
	opts := testOptions(t)
	newNode := func(t *testing.T) *Engine {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		o := opts
		o.NodeID = "" // each node its own id
		e, err := New(ctx, o)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		return e
	}
	enginetest.Run(t, func(t *testing.T) engine.Engine { return newNode(t) }, enginetest.Capabilities{
		History: true, Presence: true, Cluster: true, Idempotency: true, Maps: true, Store: true, ChannelStates: true,
		Faulty: func(t *testing.T) (engine.Engine, engine.Engine, func()) {
			a, b := newNode(t), newNode(t)
			return a, b, func() { breakSubscribers(t, b) }
		},
	})
}
