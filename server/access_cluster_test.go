package server

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// TestPostgresBlockAndRevokeAcrossNodes blocks a user through node 1's
// API and measures how long node 2 takes to close that user's
// connection (issue 37 asks for under a second); the block is kept in
// PostgreSQL, so node 2 refuses the user's next connect, and a node
// started after the block refuses it too (it loads the store at start).
func TestPostgresBlockAndRevokeAcrossNodes(t *testing.T) {
	c := startPGCluster(t, 2, func(cfg *config.Config) {
		cfg.Channel.WithoutNamespace.NamespaceOptions = hub.NamespaceOptions{AllowSubscribeForClient: true}
	})
	n1, n2 := c.nodes[0], c.nodes[1]
	bad := mustDial(t, n2, "mallory")
	good := mustDial(t, n2, "alice")

	start := time.Now()
	mustAPI(t, n1, "block_user", map[string]any{"user": "mallory"}, nil)
	code, err := bad.AwaitClose(5 * time.Second)
	took := time.Since(start)
	if err != nil || code != int(protocol.DisconnectForceNoReconnect) {
		t.Fatalf("blocked user's connection on node 2: close %d (%v), want 3503", code, err)
	}
	t.Logf("block through node 1 closed the connection on node 2 after %v", took)
	if took > time.Second {
		t.Errorf("node 2 closed the blocked user's connection after %v, want within 1s", took)
	}
	if _, err := dialClient(t.Context(), n2, "mallory", 0); err == nil {
		t.Fatal("a blocked user connected to node 2")
	}
	lateCfg := n1.cfg
	lateCfg.Name = "node3"
	late := startServer(t, lateCfg)
	t.Cleanup(func() { _ = late.Shutdown(t.Context()) })
	if _, err := dialClient(t.Context(), late, "mallory", 0); err == nil {
		t.Fatal("a blocked user connected to a node started after the block")
	}
	if _, err := dialClient(t.Context(), late, "alice", 0); err != nil {
		t.Fatalf("another user cannot connect to the late node: %v", err)
	}
	mustAPI(t, n2, "unblock_user", map[string]any{"user": "mallory"}, nil)
	mustDial(t, n1, "mallory")
	good.mustSubscribe(t, "news")
}
