package redis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testOptions returns options with a key prefix no other test uses, whose
// keys are deleted when t ends, and intervals short enough for tests.
func testOptions(t testing.TB) Config {
	t.Helper()
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	prefix := "herald_t_" + randomToken(6)
	t.Cleanup(func() { deletePrefix(t, addr, prefix) })
	return Config{
		Addrs:          []string{addr},
		Prefix:         prefix,
		HistoryMetaTTL: 10 * time.Minute,
		HealthInterval: 200 * time.Millisecond,
		ReconnectMin:   10 * time.Millisecond,
		ReconnectMax:   200 * time.Millisecond,
		Logger:         testenv.Logger(),
	}
}

// deletePrefix removes every key of a test's prefix.
func deletePrefix(t testing.TB, addr, prefix string) {
	c := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	testenv.DeleteRedisKeys(t, c, prefix)
}

// newTestEngine makes an engine that is closed when t ends.
func newTestEngine(t testing.TB, opts Config) *Engine {
	t.Helper()
	return enginetest.NewEngine(t, func(ctx context.Context) (*Engine, error) { return New(ctx, opts) })
}

// startEngine makes and starts an engine delivering to h.
func startEngine(t testing.TB, opts Config, h engine.Handler) *Engine {
	t.Helper()
	e := newTestEngine(t, opts)
	enginetest.StartEngine(t, e, h)
	return e
}

// checkOffsets fails unless got is exactly offsets 1..n, in order.
func checkOffsets(t testing.TB, ch string, got []enginetest.Delivery, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%s: %d deliveries, want %d", ch, len(got), n)
	}
	for i, d := range got {
		if d.Pub.Offset != uint64(i+1) || d.Position.Offset != uint64(i+1) {
			t.Fatalf("%s: delivery %d has offset %d (position %d), want %d", ch, i, d.Pub.Offset, d.Position.Offset, i+1)
		}
	}
}

// killSubscribers closes the node's subscribing connections from the
// server side, as a network failure would.
func killSubscribers(t testing.TB, c goredis.UniversalClient, nodeID string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, err := c.Do(ctx, "client", "list", "type", "pubsub").Text()
	if err != nil {
		t.Fatalf("CLIENT LIST: %v", err)
	}
	killed := 0
	for _, id := range clientIDs(list, connectionName(nodeID)) {
		if err := c.Do(ctx, "client", "kill", "id", id).Err(); err == nil {
			killed++
		}
	}
	return killed
}

// breakSubscribers kills e's subscribing connections and waits until every
// channel e was subscribed to is subscribed again: the suite's Reconnect
// test's fault.
func breakSubscribers(t *testing.T, e *Engine) {
	t.Helper()
	channels := subscribedChannels(e)
	before := e.Stats().Resubscribed
	if killSubscribers(t, e.client, e.NodeID()) == 0 {
		t.Fatalf("node %s has no subscribing connection to kill", e.NodeID())
	}
	enginetest.Eventually(t, 10*time.Second, func() string {
		if n := e.Stats().Resubscribed - before; n < channels {
			return fmt.Sprintf("node %s resubscribed %d of its %d channels", e.NodeID(), n, channels)
		}
		return ""
	})
}

// subscribedChannels counts the channels e is subscribed to.
func subscribedChannels(e *Engine) uint64 {
	var n uint64
	for _, s := range e.subscribers() {
		s.mu.Lock()
		for rch := range s.waiting {
			if e.keys.isChannel(rch) {
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}

// clientIDs returns the ids of the CLIENT LIST entries named name.
func clientIDs(list, name string) []string {
	var ids []string
	for line := range strings.Lines(list) {
		var id string
		named := false
		for f := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "id":
				id = v
			case "name":
				named = v == name
			}
		}
		if named && id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}
