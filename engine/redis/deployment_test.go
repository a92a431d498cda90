package redis

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// The Sentinel and Cluster tests run on the deployments
// scripts/services.sh starts; these helpers give them what the standalone
// tests get from testOptions and helpers_test.go.

// sentinelOptions returns testOptions aimed at the test Sentinel set.
func sentinelOptions(t testing.TB) Config {
	t.Helper()
	addrs := testenv.Require(t, "HERALD_TEST_REDIS_SENTINEL_ADDRS")
	master := testenv.Require(t, "HERALD_TEST_REDIS_SENTINEL_MASTER")
	return deploymentOptions(t, Config{Addrs: strings.Split(addrs, ","), SentinelMaster: master})
}

// clusterOptions returns testOptions aimed at the test Redis Cluster.
func clusterOptions(t testing.TB) Config {
	t.Helper()
	addrs := testenv.Require(t, "HERALD_TEST_REDIS_CLUSTER_ADDRS")
	return deploymentOptions(t, Config{Addrs: strings.Split(addrs, ","), Cluster: true})
}

// deploymentOptions is testOptions for the deployment base names: a prefix
// of the test's own, deleted when it ends, and short intervals.
func deploymentOptions(t testing.TB, base Config) Config {
	t.Helper()
	o := base
	o.Prefix = "herald_t_" + randomToken(6)
	o.HistoryMetaTTL = 10 * time.Minute
	o.HealthInterval = 200 * time.Millisecond
	o.ReconnectMin = 10 * time.Millisecond
	o.ReconnectMax = 200 * time.Millisecond
	o.Logger = testenv.Logger()
	t.Cleanup(func() { deleteKeys(t, o) })
	return o
}

// eachServer runs f on every server that holds data: the master of a
// Sentinel set, each master of a Cluster (concurrently), or the
// standalone server.
func eachServer(ctx context.Context, c goredis.UniversalClient, f func(context.Context, *goredis.Client) error) error {
	switch c := c.(type) {
	case *goredis.ClusterClient:
		return c.ForEachMaster(ctx, f)
	case *goredis.Client:
		return f(ctx, c)
	}
	return fmt.Errorf("unexpected client %T", c)
}

// deleteKeys removes every key of o's prefix, on every master.
func deleteKeys(t testing.TB, o Config) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := o.newClient()
	defer c.Close()
	err := eachServer(ctx, c, func(ctx context.Context, s *goredis.Client) error {
		iter := s.Scan(ctx, 0, o.Prefix+":*", 1000).Iterator()
		// One key per command: in a Cluster a multi-key DEL needs one slot.
		p := s.Pipeline()
		for iter.Next(ctx) {
			p.Unlink(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			return err
		}
		if p.Len() == 0 {
			return nil
		}
		_, err := p.Exec(ctx)
		return err
	})
	if err != nil {
		t.Errorf("delete test keys of %s: %v", o.Prefix, err)
	}
}

// killSubscribersAnywhere closes e's subscribing connections on whichever
// server holds them (in a Cluster they may sit on any master).
func killSubscribersAnywhere(t testing.TB, e *Engine) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var killed atomic.Int64 // ForEachMaster runs f on the masters concurrently
	err := eachServer(ctx, e.client, func(ctx context.Context, s *goredis.Client) error {
		list, err := s.Do(ctx, "client", "list", "type", "pubsub").Text()
		if err != nil {
			return err
		}
		for _, id := range clientIDs(list, connectionName(e.NodeID())) {
			if s.Do(ctx, "client", "kill", "id", id).Err() == nil {
				killed.Add(1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("kill subscribing connections: %v", err)
	}
	return int(killed.Load())
}

// runConformance runs the engine suite on nodes made from opts. The
// Reconnect test's fault kills the subscribing node's pub/sub connections
// and waits until it has resubscribed.
func runConformance(t *testing.T, opts Config) {
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
			return a, b, func() {
				channels := subscribedChannels(b)
				before := b.Stats().Resubscribed
				if killSubscribersAnywhere(t, b) == 0 {
					t.Fatalf("node %s has no subscribing connection to kill", b.NodeID())
				}
				enginetest.Eventually(t, 10*time.Second, func() string {
					if n := b.Stats().Resubscribed - before; n < channels {
						return fmt.Sprintf("node %s resubscribed %d of its %d channels", b.NodeID(), n, channels)
					}
					return ""
				})
			}
		},
	})
}
