package sharded

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/engine/redis"
	"github.com/heraldhq/herald/internal/testenv"
)

// TestConformanceRedis runs the engine suite against two Redis shards (two
// key prefixes; TestShardDownRedis uses separate servers).
func TestConformanceRedis(t *testing.T) {
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	cfgs := redisConfigs(t, addr, addr)
	newNode := func(t *testing.T) engine.Engine {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		e, err := NewRedis(ctx, append([]redis.Config(nil), cfgs...))
		if err != nil {
			t.Fatalf("NewRedis: %v", err)
		}
		return e
	}
	enginetest.Run(t, newNode, enginetest.Capabilities{History: true, Presence: true, Cluster: true, Idempotency: true})
}

// TestConformancePostgres runs the engine suite against two PostgreSQL
// shards: the PostgreSQL 15 and 18 test clusters when both are there.
func TestConformancePostgres(t *testing.T) {
	shards := pgShards(t)
	newNode := func(t *testing.T) engine.Engine {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		e, err := NewPostgres(ctx, pgConfigs(shards, ""))
		if err != nil {
			t.Fatalf("NewPostgres: %v", err)
		}
		return e
	}
	enginetest.Run(t, newNode, enginetest.Capabilities{History: true, Presence: true, Cluster: true, Idempotency: true})
}

// TestSpreads checks that a sharded engine really uses every shard: a
// channel's stream is on the shard ShardOf names and on no other.
func TestSpreads(t *testing.T) {
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	cfgs := redisConfigs(t, addr, addr)
	e := enginetest.NewEngine(t, func(ctx context.Context) (*Engine, error) { return NewRedis(ctx, cfgs) })
	enginetest.StartEngine(t, e, nopHandler{})
	for s := range 2 {
		ch := channelOn(t, 2, s, "spread")
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if _, err := e.Publish(ctx, ch, &engine.Publication{Data: []byte(`1`)}, engine.PublishOptions{HistorySize: 10, HistoryTTL: time.Minute}); err != nil {
			t.Fatalf("Publish(%q): %v", ch, err)
		}
		for i, sh := range e.shards {
			pubs, _, err := sh.History(ctx, ch, engine.HistoryRequest{Limit: -1})
			if err != nil {
				t.Fatalf("shard %d History: %v", i, err)
			}
			if want := map[bool]int{true: 1, false: 0}[i == s]; len(pubs) != want {
				t.Errorf("channel of shard %d: shard %d holds %d publications, want %d", s, i, len(pubs), want)
			}
		}
	}
}

// nopHandler drops everything.
type nopHandler struct{}

func (nopHandler) HandlePublication(string, *engine.Publication, engine.StreamPosition) {}
func (nopHandler) HandleJoin(string, *engine.ClientInfo)                                {}
func (nopHandler) HandleLeave(string, *engine.ClientInfo)                               {}
func (nopHandler) HandleControl([]byte)                                                 {}

// channelOn returns a new channel name that shard s of n owns.
func channelOn(t testing.TB, n, s int, prefix string) string {
	t.Helper()
	for range 1000 {
		ch := prefix + "_" + randomToken(6)
		if ShardOf(ch, n) == s {
			return ch
		}
	}
	t.Fatalf("no channel on shard %d of %d in 1000 tries", s, n)
	return ""
}
