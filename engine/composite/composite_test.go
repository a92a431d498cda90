package composite_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/composite"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/engine/nats"
	"github.com/heraldhq/herald/engine/redis"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// prefix is a key and subject prefix no other test uses.
func prefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	return "herald_t_" + hex.EncodeToString(b[:])
}

// redisPresence opens a Redis presence store under prefix p; the composite
// engine that takes it closes it.
func redisPresence(t *testing.T, p string) engine.PresenceManager {
	t.Helper()
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	pm, err := redis.NewPresence(ctx, redis.Config{Addrs: []string{addr}, Prefix: p})
	if err != nil {
		t.Fatalf("redis.NewPresence: %v", err)
	}
	return pm
}

// TestConformanceNATSBrokerRedisPresence runs the engine suite over the
// pairing of Centrifugo's 'broker: {type: nats}' with 'presence_manager:
// {type: redis}': delivery, control and the cluster tests from NATS,
// presence from Redis, shared by every node.
func TestConformanceNATSBrokerRedisPresence(t *testing.T) {
	url := testenv.Require(t, "HERALD_TEST_NATS_URL")
	p := prefix()
	enginetest.Run(t, func(t *testing.T) engine.Engine {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		pm := redisPresence(t, p)
		b, err := nats.New(ctx, nats.Config{URL: url, Prefix: p, PingInterval: time.Second, ReconnectWait: 20 * time.Millisecond, Logger: testenv.Logger()})
		if err != nil {
			t.Fatalf("nats.New: %v", err)
		}
		return composite.New(b, pm)
	}, enginetest.Capabilities{Presence: true, Cluster: true})
}

// TestConformanceMemoryBrokerRedisPresence pairs a broker that keeps
// history, maps and a Store with another presence store: all of those
// stay the broker's.
func TestConformanceMemoryBrokerRedisPresence(t *testing.T) {
	p := prefix()
	enginetest.Run(t, func(t *testing.T) engine.Engine {
		return composite.New(memory.New(memory.Config{JanitorInterval: 50 * time.Millisecond}), redisPresence(t, p))
	}, enginetest.Capabilities{History: true, Presence: true, Idempotency: true, Maps: true, Store: true})
}
