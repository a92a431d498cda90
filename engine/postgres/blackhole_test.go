package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// proxiedDSN starts a proxy in front of dsn's server and returns it with a
// DSN that connects through it.
func proxiedDSN(t *testing.T, dsn string) (*testenv.Proxy, string) {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.NewProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	host, port, _ := net.SplitHostPort(p.Addr())
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Host = p.Addr()
		return p, u.String()
	}
	// In the key=value form a later key wins.
	return p, dsn + " host=" + host + " port=" + port
}

// TestBlackholeListener black-holes one node's listening connection during
// a sustained stream to a history channel, as a NAT gateway that forgets
// the flow does: no FIN, no RST, the socket just goes quiet. The node must
// notice within its ping bound, give up on reconnect attempts that fall
// into the same hole within WriteTimeout, reconnect once the path works
// again and replay what it missed, so that every node delivers every
// publication exactly once, in order.
func TestBlackholeListener(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	ch := "blackhole-listener:" + randomToken(4)
	proxy, viaProxy := proxiedDSN(t, dsn)
	nodes := startNodes(t, dsn, schema, ch, 2)

	opts := testOptions(dsn, schema)
	opts.ListenDSN = viaProxy
	opts.ListenerPing = 300 * time.Millisecond
	opts.WriteTimeout = time.Second
	logs := testenv.NewLogWatch(slog.LevelDebug)
	opts.Logger = slog.New(logs)
	rec := newRecorder()
	e := startEngine(t, opts, rec)
	if err := e.Subscribe(t.Context(), ch); err != nil {
		t.Fatal(err)
	}
	nodes = append(nodes, &streamNode{name: "H (black-holed)", e: e, rec: rec})

	// Noticing takes at most one quiet ListenerPing and one unanswered
	// ping.
	bound := 2*opts.ListenerPing + 500*time.Millisecond
	var detected, abandoned time.Duration
	runStream(t, nodes, ch, 12000, func() {
		start := time.Now()
		proxy.Blackhole()
		detected = logs.Await(t, "listening connection lost, reconnecting", 30*time.Second).Sub(start)
		// Reconnect attempts fall into the hole too: each must be given up
		// after WriteTimeout and retried.
		abandoned = logs.Await(t, "listener reconnect failed", 30*time.Second).Sub(start) - detected
		reconnects := testutil.ToFloat64(e.metrics.reconnects)
		proxy.Restore()
		testenv.Eventually(t, "the listener to reconnect", 30*time.Second, func() bool {
			return testutil.ToFloat64(e.metrics.reconnects) > reconnects
		})
	})
	t.Logf("black-holed listener noticed after %v (bound %v); reconnect attempt into the hole abandoned after %v",
		detected.Round(time.Millisecond), bound, abandoned.Round(time.Millisecond))
	if errs := logs.Errors(); len(errs) > 0 {
		t.Errorf("the black-holed node logged errors: %q", errs)
	}
	if detected > bound {
		t.Errorf("black-holed listener noticed after %v, want at most %v", detected, bound)
	}
	if limit := opts.WriteTimeout + opts.ReconnectMin*2 + 500*time.Millisecond; abandoned > limit {
		t.Errorf("reconnect attempt into the hole abandoned after %v, want at most %v", abandoned, limit)
	}
}

// catchInTransaction opens the hole while one of e's publishing
// transactions is between its two round trips, holding the row lock of
// ch's stream, so that the transaction is left open on the server: it
// locks the row from another session until e's alloc() waits on it, opens
// the hole, then lets go, and e's backend sends its answer into the hole.
// It returns when the hole opened.
func catchInTransaction(t *testing.T, ctx context.Context, dsn, schema, ch string, e *Engine, proxy *testenv.Proxy) time.Time {
	t.Helper()
	hold, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close(context.Background())
	watch, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(context.Background())
	tx, err := hold.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1 FROM "+schema+".streams WHERE channel = $1 FOR UPDATE", ch); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "a publishing transaction to wait on the stream's lock", 30*time.Second, func() bool {
		var n int
		err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND wait_event_type = 'Lock'`, "herald-publish:"+e.NodeID()).Scan(&n)
		return err == nil && n > 0
	})
	start := time.Now()
	proxy.Blackhole()
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return start
}

// publishOutcome is one publish call of TestBlackholePublisher.
type publishOutcome struct {
	data string
	err  error
	took time.Duration
}

// TestBlackholePublisher black-holes one node's publishing connections
// while it and another node publish to the same history channel. A
// publish may fail, but only with an error and within its bound; every
// publish that succeeded is delivered exactly once to every node, nothing
// is delivered twice, and the other node's publishing is not held up for
// longer than the bound by a transaction the black hole left open.
func TestBlackholePublisher(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	ch := "blackhole-publisher:" + randomToken(4)
	proxy, viaProxy := proxiedDSN(t, dsn)

	optsH := testOptions(viaProxy, schema)
	optsH.ListenDSN = dsn
	optsH.WriteTimeout = time.Second
	optsO := testOptions(dsn, schema)
	optsO.WriteTimeout = time.Second
	nodes := make([]*streamNode, 2)
	for i, opts := range []Config{optsH, optsO} {
		rec := newRecorder()
		e := startEngine(t, opts, rec)
		if err := e.Subscribe(t.Context(), ch); err != nil {
			t.Fatal(err)
		}
		nodes[i] = &streamNode{name: []string{"H (black-holed)", "O"}[i], e: e, rec: rec}
	}

	// A publish waits for the transaction ahead of it in its queue and
	// then for its own, each bounded by WriteTimeout.
	bound := 2*optsH.WriteTimeout + 500*time.Millisecond
	const publishers, perPublisher = 4, 600
	var (
		mu       sync.Mutex
		outcomes = make(map[string][]publishOutcome) // by node
		wg       sync.WaitGroup
		progress = make(chan struct{}, publishers*perPublisher*2)
	)
	opts := engine.PublishOptions{HistorySize: 10 * publishers * perPublisher, HistoryTTL: 10 * time.Minute}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for _, n := range nodes {
		for p := range publishers {
			wg.Go(func() {
				for i := range perPublisher {
					data := fmt.Sprintf(`{"n":%q,"p":%d,"i":%d}`, n.name[:1], p, i)
					start := time.Now()
					_, err := n.e.Publish(ctx, ch, &engine.Publication{Data: []byte(data)}, opts)
					o := publishOutcome{data: data, err: err, took: time.Since(start)}
					mu.Lock()
					outcomes[n.name] = append(outcomes[n.name], o)
					mu.Unlock()
					progress <- struct{}{}
					if ctx.Err() != nil {
						return
					}
				}
			})
		}
	}
	// Black-hole once a sixth of the publishes are done, and restore after
	// as many again, so that publishing goes on before, during and after.
	for range publishers * perPublisher / 3 {
		<-progress
	}
	holeStart := catchInTransaction(t, ctx, dsn, schema, ch, nodes[0].e, proxy)
	// Wait for the black-holed node to report failures: its transactions
	// in flight are lost in the hole.
	testenv.Eventually(t, "publishes on the black-holed node to fail", 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, o := range outcomes[nodes[0].name] {
			if o.err != nil {
				return true
			}
		}
		return false
	})
	t.Logf("first publish failure %v after the hole opened", time.Since(holeStart).Round(time.Millisecond))
	proxy.Restore()
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("publishing did not finish")
	}

	succeeded := make(map[string]bool)
	failed := 0
	for node, list := range outcomes {
		var slowest time.Duration
		for _, o := range list {
			slowest = max(slowest, o.took)
			if o.err == nil {
				succeeded[o.data] = true
				continue
			}
			failed++
			if o.took > bound {
				t.Errorf("node %s: publish failed after %v, want at most %v: %v", node, o.took, bound, o.err)
			}
		}
		if slowest > bound {
			t.Errorf("node %s: slowest publish took %v, want at most %v", node, slowest, bound)
		}
		t.Logf("node %s: %d publishes, slowest %v", node, len(list), slowest.Round(time.Millisecond))
	}
	t.Logf("%d publishes succeeded, %d failed", len(succeeded), failed)
	if failed == 0 {
		t.Error("no publish failed: the hole caught nothing in flight")
	}

	var pos engine.StreamPosition
	testenv.Eventually(t, "the stream position", 30*time.Second, func() bool {
		_, p, err := nodes[1].e.History(ctx, ch, engine.HistoryRequest{})
		pos = p
		return err == nil
	})
	if pos.Offset < uint64(len(succeeded)) {
		t.Fatalf("stream top %d, below the %d acknowledged publications", pos.Offset, len(succeeded))
	}
	for _, n := range nodes {
		got := n.rec.awaitN(t, ch, int(pos.Offset))
		time.Sleep(100 * time.Millisecond) // room for a duplicate to show
		got = n.rec.get(ch)
		checkOffsets(t, "node "+n.name, got, pos.Offset, pos.Epoch)
		seen := make(map[string]int, len(got))
		for _, d := range got {
			seen[string(d.pub.Data)]++
		}
		for data, c := range seen {
			if c > 1 {
				t.Errorf("node %s: %s delivered %d times", n.name, data, c)
			}
		}
		missing := 0
		for data := range succeeded {
			if seen[data] != 1 {
				missing++
			}
		}
		if missing > 0 {
			t.Errorf("node %s: %d acknowledged publications not delivered", n.name, missing)
		}
		t.Logf("node %s: %d delivered (%d acknowledged, the rest failed in doubt); lost %.0f", n.name, len(got),
			len(succeeded), testutil.ToFloat64(n.e.metrics.lost))
	}
}
