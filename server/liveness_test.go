package server

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestDeadNodePresenceForgotten: on PostgreSQL, a node whose heartbeats
// stop is dropped from the hubs' liveness registry, the one registry of
// the cluster, and its presence rows go with it, long before their TTL.
// The dead node is a bare engine that announced itself like a hub, added a
// presence entry with an hour's TTL, and went silent.
func TestDeadNodePresenceForgotten(t *testing.T) {
	c := startPGCluster(t, 2, nil)
	cfg := config.Default()
	cfg.Engine.Type = "postgres"
	cfg.Engine.Postgres.DSN = c.dsn
	cfg.Engine.Postgres.Schema = c.schema
	eng, err := newEngine(cfg, "ghost", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(t.Context(), nopHandler{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	id := eng.NodeID()
	const ch = "dead-node-presence"
	if err := eng.AddPresence(t.Context(), ch, &engine.ClientInfo{User: "u", Client: "ghost-client"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	beat := []byte(`{"from":"` + id + `","node":{"uid":"` + id + `","name":"ghost"}}`)
	if err := eng.PublishControl(t.Context(), beat, ""); err != nil {
		t.Fatal(err)
	}
	n1 := c.nodes[0]
	testenv.Eventually(t, "the ghost node known", 10*time.Second, func() bool { return len(n1.Hub().Nodes()) == 3 })
	start := time.Now()
	testenv.Eventually(t, "the silent node's presence gone", 30*time.Second, func() bool {
		p, err := n1.Hub().Engine().Presence(t.Context(), ch)
		return err == nil && len(p) == 0
	})
	t.Logf("presence of a node silent since its one heartbeat gone %v after it", time.Since(start).Round(100*time.Millisecond))
	if got := len(n1.Hub().Nodes()); got != 2 {
		t.Errorf("%d nodes listed once the ghost went silent, want 2", got)
	}
}
