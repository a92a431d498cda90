package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/composite"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestEngineNATSBrokerRedisPresence: a Centrifugo file with a NATS broker
// and a Redis presence manager opens a NATS engine paired with Redis
// presence, which two nodes share.
func TestEngineNATSBrokerRedisPresence(t *testing.T) {
	natsURL := testenv.Require(t, "HERALD_TEST_NATS_URL")
	redisAddr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	prefix := "herald-server-test-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	cfg, err := config.ParseCentrifugo([]byte(fmt.Sprintf(`{
  "broker": {"enabled": true, "type": "nats", "nats": {"url": "nats://%s", "prefix": %q}},
  "presence_manager": {"enabled": true, "type": "redis", "redis": {"address": [%q], "prefix": %q}},
  "channel": {"without_namespace": {"presence": true}}
}`, strings.TrimPrefix(natsURL, "nats://"), prefix, redisAddr, prefix)), "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Engine.Type != "nats" || cfg.Engine.Presence != "redis" {
		t.Fatalf("engine %q, presence %q: want nats with redis presence", cfg.Engine.Type, cfg.Engine.Presence)
	}
	open := func() engine.Engine {
		e, err := newEngine(cfg, "node", testenv.Logger())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := e.(*composite.Engine); !ok {
			t.Fatalf("engine %T, want a composite one", e)
		}
		enginetest.StartEngine(t, e, enginetest.NewRecorder())
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	a, b := open(), open()
	if err := a.AddPresence(t.Context(), "room", &engine.ClientInfo{Client: "c1", User: "u1"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := b.Presence(t.Context(), "room")
	if err != nil || got["c1"] == nil || got["c1"].User != "u1" {
		t.Fatalf("presence on the other node: %v, %v", got, err)
	}
}
