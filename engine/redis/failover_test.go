package redis

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
)

// TestSentinelFailover publishes a stream with history through two nodes
// while the Sentinels promote the replica (SENTINEL FAILOVER): every
// publication Publish acknowledged must reach both nodes exactly once and
// in offset order, live or replayed from history after the nodes moved to
// the new master.
func TestSentinelFailover(t *testing.T) {
	opts := sentinelOptions(t)
	// Acknowledged means on the replica too.
	opts.MinReplicas = 1
	sentinels := goredis.NewSentinelClient(&goredis.Options{Addr: opts.Addrs[0], Protocol: 2})
	defer sentinels.Close()
	before := awaitSentinelReady(t, sentinels, opts.SentinelMaster)

	ch := "failover_" + randomToken(4)
	var nodes []*Engine
	var recs []*enginetest.Recorder
	for range 2 {
		rec := enginetest.NewRecorder()
		o := opts
		o.NodeID = ""
		e := startEngine(t, o, rec)
		if err := e.Subscribe(t.Context(), ch); err != nil {
			t.Fatal(err)
		}
		nodes, recs = append(nodes, e), append(recs, rec)
	}

	// The stream runs until the failover is over and afterMin more
	// publications were acknowledged, for at least afterTime.
	const publishers, before1, afterMin, afterTime = 4, 1000, 1000, 2 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var (
		mu       sync.Mutex
		acked    = make(map[string]engine.StreamPosition) // data -> position
		done     atomic.Int64
		failures atomic.Int64
		// firstAfter is the first publication acknowledged after the
		// switch.
		switched   atomic.Bool
		firstAfter atomic.Pointer[string]
		wg         sync.WaitGroup
		stop       = make(chan struct{})
	)
	popts := engine.PublishOptions{HistorySize: 100000, HistoryTTL: 10 * time.Minute}
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	for p := range publishers {
		e := nodes[p%len(nodes)]
		wg.Go(func() {
			for i := 0; !stopped(); i++ {
				// A failed attempt may still have been stored: each attempt
				// carries data of its own, so only acknowledged ones are
				// required below.
				for attempt := 0; ; attempt++ {
					data := fmt.Sprintf(`"%d.%d.%d"`, p, i, attempt)
					actx, acancel := context.WithTimeout(ctx, 2*time.Second)
					sp, err := e.Publish(actx, ch, &engine.Publication{Data: []byte(data)}, popts)
					acancel()
					if err == nil {
						mu.Lock()
						acked[data] = sp
						mu.Unlock()
						if switched.Load() {
							firstAfter.CompareAndSwap(nil, &data)
						}
						break
					}
					if ctx.Err() != nil {
						return
					}
					failures.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
				done.Add(1)
			}
		})
	}
	wg.Go(func() {
		defer close(stop)
		for done.Load() < before1 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		start := time.Now()
		after := sentinelFailover(t, ctx, sentinels, opts.SentinelMaster, before)
		t.Logf("master moved from %s to %s in %v", before, after, time.Since(start))
		switched.Store(true)
		start = time.Now()
		// How long until publishing works again and both nodes deliver
		// what the new master got.
		for firstAfter.Load() == nil && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		if d := firstAfter.Load(); d != nil {
			t.Logf("first publication acknowledged %v after the switch", time.Since(start))
			for i, rec := range recs {
				enginetest.Eventually(t, 30*time.Second, func() string {
					for _, p := range rec.Publications(ch) {
						if string(p.Pub.Data) == *d {
							return ""
						}
					}
					return "node has not delivered " + *d
				})
				t.Logf("node %d delivers from the new master %v after the switch", i, time.Since(start))
			}
		}
		n := done.Load()
		start = time.Now()
		for (done.Load() < n+afterMin || time.Since(start) < afterTime) && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
	})
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("stream did not finish: %d acknowledged", done.Load())
	}
	t.Logf("%d publications acknowledged, %d failed attempts retried", done.Load(), failures.Load())

	byOffset := make(map[uint64]int)
	for _, sp := range acked {
		byOffset[sp.Offset]++
	}
	for off, n := range byOffset {
		if n > 1 {
			t.Errorf("offset %d acknowledged to %d publications", off, n)
		}
	}
	for i, rec := range recs {
		t.Logf("node %d: %+v", i, nodes[i].Stats())
		node := fmt.Sprintf("node %d", i)
		checkAcked(t, node, rec, ch, acked)
		st := nodes[i].Stats()
		t.Logf("%s: %+v", node, st)
	}
	// Leave the set ready for the next test.
	awaitSentinelReady(t, sentinels, opts.SentinelMaster)
}

// checkAcked waits until rec holds every acknowledged publication of ch,
// then checks that each came exactly once, at its acknowledged position,
// and in offset order. Publications that were not acknowledged may have
// been delivered and then lost with the old master, their offsets reused
// by the new one: they are counted, not judged.
func checkAcked(t *testing.T, node string, rec *enginetest.Recorder, ch string, acked map[string]engine.StreamPosition) {
	t.Helper()
	missing := func() []string {
		seen := make(map[string]bool)
		for _, d := range rec.Publications(ch) {
			seen[string(d.Pub.Data)] = true
		}
		var out []string
		for data := range acked {
			if !seen[data] {
				out = append(out, data)
			}
		}
		return out
	}
	enginetest.Eventually(t, 30*time.Second, func() string {
		if m := missing(); len(m) > 0 {
			return fmt.Sprintf("%s lacks %d acknowledged publications, e.g. %s", node, len(m), m[0])
		}
		return ""
	})
	got := rec.Publications(ch)
	others := enginetest.CheckAcknowledgedOnce(t, node, got, acked)
	t.Logf("%s: %d deliveries: %d acknowledged, %d not acknowledged", node, len(got), len(acked), others)
}

// masterAddr asks a Sentinel where the master is.
func masterAddr(ctx context.Context, s *goredis.SentinelClient, master string) (string, error) {
	addr, err := s.GetMasterAddrByName(ctx, master).Result()
	if err != nil {
		return "", err
	}
	return strings.Join(addr, ":"), nil
}

// awaitSentinelReady waits until the Sentinel sees the master up with a
// replica in sync, so that it can fail over, and returns the master.
func awaitSentinelReady(t *testing.T, s *goredis.SentinelClient, master string) string {
	t.Helper()
	var addr string
	enginetest.Eventually(t, 30*time.Second, func() string {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		m, err := s.Master(ctx, master).Result()
		if err != nil {
			return fmt.Sprintf("SENTINEL MASTER: %v", err)
		}
		if m["flags"] != "master" || m["num-slaves"] == "0" {
			return fmt.Sprintf("master %s:%s flags %s, %s replicas", m["ip"], m["port"], m["flags"], m["num-slaves"])
		}
		replicas, err := s.Replicas(ctx, master).Result()
		if err != nil {
			return fmt.Sprintf("SENTINEL REPLICAS: %v", err)
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

// sentinelFailover makes the Sentinel promote the replica and waits until
// it names a master other than old.
func sentinelFailover(t *testing.T, ctx context.Context, s *goredis.SentinelClient, master, old string) string {
	t.Helper()
	// A Sentinel refuses while an earlier failover settles (INPROG) or
	// before it trusts a replica (NOGOODSLAVE): retry.
	for {
		err := s.Failover(ctx, master).Err()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Errorf("SENTINEL FAILOVER: %v", err)
			return old
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		addr, err := masterAddr(ctx, s, master)
		if err == nil && addr != old {
			return addr
		}
		if ctx.Err() != nil {
			t.Errorf("master still %s after SENTINEL FAILOVER (%v)", old, err)
			return old
		}
		time.Sleep(20 * time.Millisecond)
	}
}
