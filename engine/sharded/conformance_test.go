package sharded

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/engine/redis"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// TestConformanceRedis runs the engine suite against two Redis shards (two
// key prefixes; TestShardDownRedis uses separate servers).
func TestConformanceRedis(t *testing.T) {
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	cfgs := redisConfigs(t, addr, addr)
	newNode := redisNodes(cfgs)
	enginetest.Run(t, newNode, enginetest.Capabilities{
		History: true, Presence: true, Cluster: true, Idempotency: true, Maps: true, Store: true, ChannelStates: true,
		Faulty: func(t *testing.T) (engine.Engine, engine.Engine, func()) {
			a, b := newNode(t), newNode(t)
			return a, b, func() { killSubscribers(t, addr, b.NodeID()) }
		},
	})
}

// killSubscribers kills node's pub/sub connections on the Redis server at
// addr (both shards of the Redis suite are there), as a network failure
// would, and returns once the node holds as many subscriptions there as
// before: its connections and subscriptions are back.
func killSubscribers(t *testing.T, addr, node string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	// Connections are named "herald:<node id>" (docs/engines.md).
	subs := func() (ids []string, total int) {
		list, err := c.Do(ctx, "client", "list", "type", "pubsub").Text()
		if err != nil {
			t.Fatalf("CLIENT LIST: %v", err)
		}
		for line := range strings.Lines(list) {
			f := map[string]string{}
			for kv := range strings.FieldsSeq(line) {
				k, v, _ := strings.Cut(kv, "=")
				f[k] = v
			}
			if f["name"] == "herald:"+node {
				ids = append(ids, f["id"])
				n, _ := strconv.Atoi(f["sub"])
				total += n
			}
		}
		return ids, total
	}
	ids, before := subs()
	if len(ids) == 0 {
		t.Fatalf("node %s has no pub/sub connection to kill", node)
	}
	for _, id := range ids {
		if err := c.Do(ctx, "client", "kill", "id", id).Err(); err != nil {
			t.Fatalf("CLIENT KILL %s: %v", id, err)
		}
	}
	testenv.Eventually(t, "the node's subscriptions to be back", 30*time.Second, func() bool {
		now, total := subs()
		return len(now) > 0 && total >= before
	})
}

// TestConformancePostgres runs the engine suite against two PostgreSQL
// shards: the PostgreSQL 15 and 18 test clusters when both are there.
func TestConformancePostgres(t *testing.T) {
	shards := pgShards(t)
	newNode := func(t *testing.T) engine.Engine {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		e, err := newPostgres(ctx, pgConfigs(shards, ""))
		if err != nil {
			t.Fatalf("newPostgres: %v", err)
		}
		return WithMaps(e)
	}
	enginetest.Run(t, newNode, enginetest.Capabilities{
		History: true, Presence: true, Cluster: true, Idempotency: true, Maps: true, Store: true, ChannelStates: true,
		Faulty: func(t *testing.T) (engine.Engine, engine.Engine, func()) {
			a, b := newNode(t), newNode(t)
			return a, b, func() { terminateListeners(t, shards, b.(*MapEngine).Engine) }
		},
	})
}

// terminateListeners terminates e's listening connection on every shard,
// as a network failure would, and returns once each has reconnected.
func terminateListeners(t *testing.T, shards []pgShard, e *Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	before := reconnects(t, e)
	dsns := map[string]bool{}
	for _, s := range shards {
		dsns[s.dsn] = true
	}
	killed := 0
	for dsn := range dsns {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`,
			"herald-listen:"+e.NodeID()).Scan(&n)
		_ = conn.Close(ctx)
		if err != nil {
			t.Fatalf("terminate listeners: %v", err)
		}
		killed += n
	}
	if killed != len(shards) {
		t.Fatalf("terminated %d listening connections of node %s, want one per shard (%d)", killed, e.NodeID(), len(shards))
	}
	testenv.Eventually(t, "every shard's listener to reconnect", 30*time.Second, func() bool {
		return reconnects(t, e) >= before+float64(len(shards))
	})
}

// reconnects sums the shards' listener_reconnects_total.
func reconnects(t *testing.T, e *Engine) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(e.Collectors()...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if strings.HasSuffix(mf.GetName(), "listener_reconnects_total") {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// TestSpreads checks that a sharded engine really uses every shard: a
// channel's stream is on the shard ShardOf names and on no other.
func TestSpreads(t *testing.T) {
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	cfgs := redisConfigs(t, addr, addr)
	e := enginetest.NewEngine(t, func(ctx context.Context) (*Engine, error) { return newRedis(ctx, cfgs) })
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

// redisNodes makes nodes of a sharded Redis engine over cfgs, with maps.
func redisNodes(cfgs []redis.Config) func(*testing.T) engine.Engine {
	return func(t *testing.T) engine.Engine {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		e, err := newRedis(ctx, append([]redis.Config(nil), cfgs...))
		if err != nil {
			t.Fatalf("newRedis: %v", err)
		}
		return WithMaps(e)
	}
}
