package server

import (
	"context"
	"testing"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/jsonclient"
)

// TestRPCPing: rpc.ping.enabled answers rpc.ping.method with an empty
// result, with no proxy configured; other methods still get 108.
func TestRPCPing(t *testing.T) {
	cfg := config.Default()
	cfg.RPC.Ping.Enabled, cfg.RPC.Ping.Method = true, "health"
	s := startServer(t, cfg)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	c := connectClient(t, s, "u")
	if m := c.Call(`{"id":2,"rpc":{"method":"health"}}`); m["error"] != nil || jsonclient.Compact(t, m["rpc"]) != `{}` {
		t.Fatalf("ping: want an empty result, got %v", m)
	}
	jsonclient.WantError(t, c.Call(`{"id":3,"rpc":{"method":"other"}}`), 108)
}
