package sharded

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/engine/redis"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// sentinelSet is a Redis deployment behind Sentinels: the test services'
// set, or one a test started for itself (startSentinelSet), which only
// that test may fail over.
type sentinelSet struct {
	sentinels []string
	master    string
}

// sharedSentinelSet is the set scripts/services.sh runs. Other tests use
// it too: never stop it or fail it over.
func sharedSentinelSet(t testing.TB) sentinelSet {
	t.Helper()
	addrs := testenv.Require(t, "HERALD_TEST_REDIS_SENTINEL_ADDRS")
	master := testenv.Require(t, "HERALD_TEST_REDIS_SENTINEL_MASTER")
	return sentinelSet{sentinels: strings.Split(addrs, ","), master: master}
}

// startSentinelSet runs a Sentinel set of the test's own on free loopback
// ports, as scripts/services.sh runs the shared one: a master, a replica
// and three Sentinels with a quorum of two that call a master down after
// one silent second. The processes end with the test.
func startSentinelSet(t testing.TB, master string) sentinelSet {
	t.Helper()
	bin := testenv.Binary(t, "redis-server")
	dir := t.TempDir()
	// Either data server may be promoted, so both get the same settings;
	// diskless sync lets a replica resynchronise at once after a failover.
	data := func(name string, port int, extra ...string) string {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", d,
			"--save", "", "--appendonly", "no", "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}, extra...)
		return testenv.StartProcess(t, exec.Command(bin, args...)).WaitListening(t, port, 10*time.Second)
	}
	mport := testenv.FreePort(t)
	data("master", mport)
	data("replica", testenv.FreePort(t), "--replicaof", "127.0.0.1", strconv.Itoa(mport))
	s := sentinelSet{master: master}
	for i := range 3 {
		d := filepath.Join(dir, "sentinel-"+strconv.Itoa(i))
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		// A Sentinel rewrites its configuration file with what it learns,
		// so each has one of its own.
		conf := filepath.Join(d, "sentinel.conf")
		text := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 2\nsentinel down-after-milliseconds %[1]s 1000\n"+
			"sentinel failover-timeout %[1]s 10000\nsentinel parallel-syncs %[1]s 1\n", master, mport)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		port := testenv.FreePort(t)
		p := testenv.StartProcess(t, exec.Command(bin, conf, "--sentinel", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", d))
		s.sentinels = append(s.sentinels, p.WaitListening(t, port, 10*time.Second))
	}
	return s
}

// client is a Sentinel client to the set's first Sentinel.
func (s sentinelSet) client(t testing.TB) *goredis.SentinelClient {
	c := goredis.NewSentinelClient(&goredis.Options{Addr: s.sentinels[0], Protocol: 2, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// masterAddr is where the Sentinels say the master is.
func (s sentinelSet) masterAddr(ctx context.Context, c *goredis.SentinelClient) (string, error) {
	addr, err := c.GetMasterAddrByName(ctx, s.master).Result()
	if err != nil {
		return "", err
	}
	return strings.Join(addr, ":"), nil
}

// awaitReady waits until a Sentinel sees the master up with a replica in
// sync, so that it can fail over and MinReplicas can be met, and returns
// the master's address.
func (s sentinelSet) awaitReady(t testing.TB, c *goredis.SentinelClient) string {
	t.Helper()
	var addr string
	enginetest.Eventually(t, 30*time.Second, func() string {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		m, err := c.Master(ctx, s.master).Result()
		if err != nil {
			return fmt.Sprintf("SENTINEL MASTER %s: %v", s.master, err)
		}
		if m["flags"] != "master" || m["num-slaves"] == "0" {
			return fmt.Sprintf("master %s:%s flags %s, %s replicas", m["ip"], m["port"], m["flags"], m["num-slaves"])
		}
		replicas, err := c.Replicas(ctx, s.master).Result()
		if err != nil {
			return fmt.Sprintf("SENTINEL REPLICAS %s: %v", s.master, err)
		}
		for _, r := range replicas {
			if r["flags"] == "slave" && r["master-link-status"] == "ok" {
				addr = m["ip"] + ":" + m["port"]
				return ""
			}
		}
		return fmt.Sprintf("no replica in sync: %v", replicas)
	})
	return addr
}

// config is a shard configuration on the set with a prefix of the test's
// own, whose keys are deleted (on the master of the moment) when t ends,
// and MinReplicas 1, so that a failover loses no acknowledged publication.
func (s sentinelSet) config(t testing.TB, c *goredis.SentinelClient) redis.Config {
	prefix := "herald_t_" + randomToken(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if addr, err := s.masterAddr(ctx, c); err == nil {
			deletePrefix(t, addr, prefix)
		}
	})
	return redis.Config{
		Addrs: s.sentinels, SentinelMaster: s.master, Prefix: prefix, MinReplicas: 1,
		HistoryMetaTTL: 10 * time.Minute, HealthInterval: 200 * time.Millisecond,
		ReconnectMin: 10 * time.Millisecond, ReconnectMax: 200 * time.Millisecond, Logger: testenv.Logger(),
	}
}

// TestSentinelShards runs two nodes on two shards that are each a Sentinel
// set: shard 0 the test services' set, shard 1 one of the test's own.
// Channels of both shards publish, deliver, keep history and presence.
// Then shard 1 fails over (SENTINEL FAILOVER) while both channels keep
// publishing: shard 0's channel stays fully served (every publication
// acknowledged at once, delivered and in history), shard 1's fails for a
// moment and recovers, and every publication it acknowledged, before,
// during or after the switch, is delivered exactly once in order and kept
// in history (MinReplicas), none lost with the old master.
func TestSentinelShards(t *testing.T) {
	a := sharedSentinelSet(t)
	b := startSentinelSet(t, "herald-shard-b")
	ac, bc := a.client(t), b.client(t)
	aMaster := a.awaitReady(t, ac)
	bMaster := b.awaitReady(t, bc)
	cfgs := []redis.Config{a.config(t, ac), b.config(t, bc)}

	rec := enginetest.NewRecorder()
	mk := func() *Engine {
		return enginetest.NewEngine(t, func(ctx context.Context) (*Engine, error) {
			return newRedis(ctx, append([]redis.Config(nil), cfgs...))
		})
	}
	sub, pub := mk(), mk()
	enginetest.StartEngine(t, sub, rec)
	enginetest.StartEngine(t, pub, nopHandler{})
	chA, chB := channelOn(t, 2, 0, "sentinel_a"), channelOn(t, 2, 1, "sentinel_b")
	hist := engine.PublishOptions{HistorySize: 100000, HistoryTTL: 10 * time.Minute}
	call := func(d time.Duration) context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), d)
		t.Cleanup(cancel)
		return ctx
	}

	// Both shards serve.
	for _, ch := range []string{chA, chB} {
		if err := sub.Subscribe(call(5*time.Second), ch); err != nil {
			t.Fatalf("Subscribe(%q): %v", ch, err)
		}
		if err := sub.AddPresence(call(5*time.Second), ch, &engine.ClientInfo{User: "u", Client: "c-" + ch}, time.Minute); err != nil {
			t.Fatalf("AddPresence(%q): %v", ch, err)
		}
		if p, err := pub.Presence(call(5*time.Second), ch); err != nil || len(p) != 1 {
			t.Fatalf("Presence(%q) from the other node: %v, %v; want the one client", ch, p, err)
		}
	}

	// The stream: one publisher per channel until shard 1's failover is
	// over and each channel has 200 more publications acknowledged.
	var (
		mu       sync.Mutex
		acked    = map[string]map[string]engine.StreamPosition{chA: {}, chB: {}}
		failures = map[string]int{}
		errs     = map[string]error{}
		count    = map[string]*atomic.Int64{chA: {}, chB: {}}
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	for _, ch := range []string{chA, chB} {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// Each attempt carries data of its own: a failed one may still
				// have been stored, and only acknowledged ones are required.
				data := fmt.Sprintf(`"%d"`, i)
				pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
				sp, err := pub.Publish(pctx, ch, &engine.Publication{Data: []byte(data)}, hist)
				pcancel()
				mu.Lock()
				if err == nil {
					acked[ch][data] = sp
				} else {
					failures[ch]++
					errs[ch] = err
				}
				mu.Unlock()
				if err == nil {
					count[ch].Add(1)
					// A steady stream, not a flood of the shared set.
					time.Sleep(time.Millisecond)
				} else if ctx.Err() != nil {
					return
				} else {
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	await := func(ch string, n int64) {
		t.Helper()
		enginetest.Eventually(t, 60*time.Second, func() string {
			if got := count[ch].Load(); got < n {
				return fmt.Sprintf("%s: %d publications acknowledged, want %d", ch, got, n)
			}
			return ""
		})
	}
	await(chA, 100)
	await(chB, 100)
	start := time.Now()
	for {
		err := bc.Failover(ctx, b.master).Err()
		if err == nil {
			break
		}
		// A Sentinel refuses while it does not yet trust the replica
		// (NOGOODSLAVE) or an earlier failover settles (INPROG).
		if ctx.Err() != nil {
			t.Fatalf("SENTINEL FAILOVER: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	enginetest.Eventually(t, 30*time.Second, func() string {
		addr, err := b.masterAddr(ctx, bc)
		if err != nil || addr == bMaster {
			return fmt.Sprintf("shard 1's master still %s (%v)", bMaster, err)
		}
		return ""
	})
	t.Logf("shard 1's master moved from %s in %v", bMaster, time.Since(start))
	nA, nB := count[chA].Load(), count[chB].Load()
	await(chB, nB+200)
	await(chA, nA+200)
	close(stop)
	wg.Wait()
	t.Logf("both channels had 200 more publications acknowledged %v after the failover began", time.Since(start))

	mu.Lock()
	defer mu.Unlock()
	t.Logf("acknowledged: shard 0 %d, shard 1 %d; failed attempts: shard 0 %d, shard 1 %d (last: %v)",
		len(acked[chA]), len(acked[chB]), failures[chA], failures[chB], errs[chB])
	if failures[chA] > 0 {
		// The shared set is other packages' too: only a failover of
		// theirs excuses a failure on shard 0.
		if now, err := a.masterAddr(t.Context(), ac); err == nil && now == aMaster {
			t.Errorf("shard 0's channel failed %d publications while shard 1 failed over (last: %v)", failures[chA], errs[chA])
		} else {
			t.Logf("shard 0's master moved (another test's failover): its %d failures are excused", failures[chA])
		}
	}
	for i, ch := range []string{chA, chB} {
		enginetest.Eventually(t, 30*time.Second, func() string {
			seen := map[string]bool{}
			for _, d := range rec.Publications(ch) {
				seen[string(d.Pub.Data)] = true
			}
			for data := range acked[ch] {
				if !seen[data] {
					return fmt.Sprintf("shard %d's channel: acknowledged %s not delivered", i, data)
				}
			}
			return ""
		})
		others := enginetest.CheckAcknowledgedOnce(t, fmt.Sprintf("shard %d's channel", i), rec.Publications(ch), acked[ch])
		pubs, _, err := pub.History(call(10*time.Second), ch, engine.HistoryRequest{Limit: -1})
		if err != nil {
			t.Fatalf("History(%q): %v", ch, err)
		}
		kept := map[string]bool{}
		for _, p := range pubs {
			kept[string(p.Data)] = true
		}
		for data := range acked[ch] {
			if !kept[data] {
				t.Errorf("shard %d's channel: acknowledged %s not in history", i, data)
			}
		}
		t.Logf("shard %d's channel: %d delivered unacknowledged, %d in history", i, others, len(pubs))
	}
	// Leave the set settled for the processes' shutdown.
	b.awaitReady(t, bc)
}

// TestSentinelShardsConformance runs the engine suite against two shards
// that are each a Sentinel set (the test services' set and one of the
// test's own), with MinReplicas as docs/engines.md recommends there.
func TestSentinelShardsConformance(t *testing.T) {
	sets := []sentinelSet{sharedSentinelSet(t), startSentinelSet(t, "herald-shard-b")}
	var cfgs []redis.Config
	var clients []*goredis.SentinelClient
	for _, s := range sets {
		c := s.client(t)
		s.awaitReady(t, c)
		cfgs, clients = append(cfgs, s.config(t, c)), append(clients, c)
	}
	newNode := redisNodes(cfgs)
	enginetest.Run(t, newNode, enginetest.Capabilities{
		History: true, Presence: true, Cluster: true, Idempotency: true, Maps: true, Store: true,
		Faulty: func(t *testing.T) (engine.Engine, engine.Engine, func()) {
			a, b := newNode(t), newNode(t)
			return a, b, func() {
				// On each shard's master of the moment.
				for i, s := range sets {
					m, err := s.masterAddr(t.Context(), clients[i])
					if err != nil {
						t.Fatalf("shard %d's master: %v", i, err)
					}
					killSubscribers(t, m, b.NodeID())
				}
			}
		},
	})
}

// TestSameServerShardsRefused checks that Open refuses two shards that
// are one Redis server under one prefix, whichever way they reach it: the
// same address twice, or two Sentinels of one set listed as two shards
// (how Centrifugo's sentinel_address reads Sentinels written one per
// entry). The same server under two prefixes is two stores.
func TestSameServerShardsRefused(t *testing.T) {
	addr := testenv.Require(t, "HERALD_TEST_REDIS_ADDR")
	set := sharedSentinelSet(t)
	if len(set.sentinels) < 2 {
		t.Fatalf("HERALD_TEST_REDIS_SENTINEL_ADDRS names %d Sentinels, want at least 2", len(set.sentinels))
	}
	base := redisConfigs(t, addr)[0]
	viaSentinel := func(s string) redis.Config {
		c := base
		c.Addrs, c.SentinelMaster = []string{s}, set.master
		return c
	}
	for name, cfgs := range map[string][]redis.Config{
		"one address twice":        {base, base},
		"two Sentinels of one set": {viaSentinel(set.sentinels[0]), viaSentinel(set.sentinels[1])},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		e, err := newRedis(ctx, cfgs)
		cancel()
		if err == nil {
			_ = e.Close()
			t.Errorf("%s: Open succeeded, want shards 0 and 1 refused as one server", name)
		} else if !strings.Contains(err.Error(), "shards 0 and 1 are one redis store") {
			t.Errorf("%s: %v, want shards 0 and 1 refused as one server", name, err)
		}
	}
	other := base
	other.Prefix = base.Prefix + "_2"
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	e, err := newRedis(ctx, []redis.Config{base, other})
	if err != nil {
		t.Fatalf("one server under two prefixes: %v", err)
	}
	_ = e.Close()
}
