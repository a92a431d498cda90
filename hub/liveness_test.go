package hub_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// forgettingEngine is the memory engine with engine.NodeForgetter: it
// records the nodes the hub tells it are gone.
type forgettingEngine struct {
	*memory.Engine
	mu        sync.Mutex
	forgotten []string
}

func (e *forgettingEngine) ForgetNode(_ context.Context, node string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.forgotten = append(e.forgotten, node)
	return nil
}

func (e *forgettingEngine) forgot(node string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Contains(e.forgotten, node)
}

// TestLeavingNodeIsForgotten: the hub's heartbeat registry is the
// cluster's liveness, and a node that leaves is dropped from it and handed
// to the engine to forget what it owned, at once.
func TestLeavingNodeIsForgotten(t *testing.T) {
	t.Parallel()
	e := &forgettingEngine{Engine: memory.New(memory.Config{})}
	n := startNodeMem(t, hub.Config{Engine: e})
	send := func(m map[string]any) {
		t.Helper()
		b, _ := json.Marshal(m)
		if err := e.Engine.PublishControl(t.Context(), b, ""); err != nil {
			t.Fatal(err)
		}
	}
	send(map[string]any{"from": "other", "node": map[string]any{"uid": "other", "name": "other"}})
	testenv.Eventually(t, "the other node known", 5*time.Second, func() bool { return len(n.hub.Nodes()) == 2 })
	send(map[string]any{"from": "other", "leaving": true})
	testenv.Eventually(t, "the other node forgotten by the engine", 5*time.Second, func() bool { return e.forgot("other") })
	if got := len(n.hub.Nodes()); got != 1 {
		t.Errorf("%d nodes after the other left, want 1", got)
	}
	if e.forgot(n.hub.NodeID()) {
		t.Error("the hub told the engine to forget its own node")
	}
}
