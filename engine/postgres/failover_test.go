package postgres

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// pgBinVar names the directory of the PostgreSQL server programs (initdb,
// pg_ctl, postgres) the failover test runs, so that it runs on the
// version under test: scripts/test.sh points it at PostgreSQL 18's for
// that run. Unset, the test runs Debian's PostgreSQL 15.
const pgBinVar = "HERALD_TEST_POSTGRES_BIN"

// pgBin returns the directory of the server programs.
func pgBin() string {
	if dir := os.Getenv(pgBinVar); dir != "" {
		return dir
	}
	return "/usr/lib/postgresql/15/bin"
}

// pgCluster is a PostgreSQL cluster the test made, on loopback.
type pgCluster struct {
	dir  string
	port int
}

// pgTool runs a PostgreSQL server program.
func pgTool(t *testing.T, prog string, args ...string) {
	t.Helper()
	asServerUser(t, filepath.Join(pgBin(), prog), args...)
}

// asServerUser runs a program as the user the servers run as. The server
// refuses to run as root, so as root the programs run as the postgres
// user.
func asServerUser(t *testing.T, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prog, argv := filepath.Base(name), args
	if os.Geteuid() == 0 {
		name, argv = "runuser", append([]string{"-u", "postgres", "--", name}, args...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	// The started server writes to its own log (-l), not to our pipes.
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", prog, args, err, out)
	}
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// failoverDir makes the directory of the test's clusters, owned by the
// user the servers run as, and removes it when the test ends.
func failoverDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "herald-failover-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// makePrimary creates, without starting it, a primary that commits only
// once its standby has the commit (synchronous replication): an
// acknowledged publication survives the standby's promotion.
func makePrimary(t *testing.T, dir string) *pgCluster {
	t.Helper()
	c := &pgCluster{dir: filepath.Join(dir, "primary"), port: freePort(t)}
	pgTool(t, "initdb", "-D", c.dir, "-U", "herald", "--auth=trust", "--encoding=UTF8", "--locale=C")
	conf := `
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 100
fsync = off
synchronous_standby_names = '*'
synchronous_commit = on
`
	appendConf(t, c.dir, conf)
	return c
}

// appendConf adds settings to a cluster's postgresql.conf.
func appendConf(t *testing.T, dir, conf string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// makeStandby copies primary, which must not have started yet, into a
// streaming standby of it, to be started (start) after the primary.
// A copy of a cluster shut down cleanly, as initdb leaves it, is a valid
// base backup; it needs no pg_basebackup, which the PostgreSQL 18 build
// the tests use does not ship, and it works on every version.
func makeStandby(t *testing.T, dir string, primary *pgCluster) *pgCluster {
	t.Helper()
	c := &pgCluster{dir: filepath.Join(dir, "standby"), port: freePort(t)}
	// The primary does not hold its port yet, so the kernel may offer it
	// again.
	for c.port == primary.port {
		c.port = freePort(t)
	}
	asServerUser(t, "cp", "-a", primary.dir, c.dir)
	asServerUser(t, "touch", filepath.Join(c.dir, "standby.signal"))
	// The copy has the primary's settings. Once promoted it has no
	// standby of its own, and with synchronous_standby_names still set
	// every commit would wait for one for ever.
	appendConf(t, c.dir, fmt.Sprintf("synchronous_standby_names = ''\nprimary_conninfo = 'host=127.0.0.1 port=%d user=herald'\n", primary.port))
	return c
}

func (c *pgCluster) start(t *testing.T) {
	t.Helper()
	pgTool(t, "pg_ctl", "-D", c.dir, "-l", c.dir+".log", "-o", "-p "+strconv.Itoa(c.port), "-w", "-t", "60", "start")
	t.Cleanup(func() { c.stopQuietly() })
}

// stopQuietly stops the cluster if it still runs, at the end of the test.
func (c *pgCluster) stopQuietly() {
	name, argv := filepath.Join(pgBin(), "pg_ctl"), []string{"-D", c.dir, "-m", "immediate", "-w", "stop"}
	if os.Geteuid() == 0 {
		name, argv = "runuser", append([]string{"-u", "postgres", "--", name}, argv...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = exec.CommandContext(ctx, name, argv...).Run()
}

func (c *pgCluster) addr() string { return "127.0.0.1:" + strconv.Itoa(c.port) }

// awaitSync waits until primary's standby streams synchronously.
func awaitSync(t *testing.T, primary *pgCluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, "postgres://herald@"+primary.addr()+"/postgres?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync' AND state = 'streaming'`).Scan(&n)
		if err == nil && n == 1 {
			t.Logf("PostgreSQL %s (%s): the standby streams synchronously", conn.PgConn().ParameterStatus("server_version"), pgBin())
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("standby not streaming synchronously: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFailover runs a primary and a synchronous streaming standby, made by
// the test, with two nodes configured with both hosts and
// target_session_attrs=read-write. While publications stream to a history
// channel, the primary is stopped at once (-m immediate) and the standby
// promoted: the nodes must find the new primary by themselves, and every
// publication Publish acknowledged must reach both nodes exactly once, in
// order.
func TestFailover(t *testing.T) {
	if _, err := os.Stat(filepath.Join(pgBin(), "initdb")); err != nil {
		if os.Getenv(testenv.RequireServices) == "1" {
			t.Fatalf("PostgreSQL server programs (%s): %v", pgBinVar, err)
		}
		t.Skipf("PostgreSQL server programs are not installed (%s): %v", pgBinVar, err)
	}
	dir := failoverDir(t)
	primary := makePrimary(t, dir)
	standby := makeStandby(t, dir, primary)
	primary.start(t)
	standby.start(t)
	awaitSync(t, primary)

	dsn := fmt.Sprintf("postgres://herald@%s,%s/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		primary.addr(), standby.addr())
	ch := "failover:" + randomToken(4)
	var nodes []*streamNode
	for i := range 2 {
		rec := newRecorder()
		opts := testOptions(dsn, "herald")
		opts.WriteTimeout = 3 * time.Second
		e := startEngine(t, opts, rec)
		if err := e.Subscribe(t.Context(), ch); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, &streamNode{name: string(rune('A' + i)), e: e, rec: rec})
	}

	const publishers, before, afterMin, afterTime = 4, 1000, 1000, 2 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var (
		mu       sync.Mutex
		acked    = make(map[string]engine.StreamPosition)
		done     atomic.Int64
		failures atomic.Int64
		wg       sync.WaitGroup
		stop     = make(chan struct{})
		stopped  atomic.Bool
		// resumed is when the first publication after the fault was
		// acknowledged (Unix ns).
		faultAt, resumed atomic.Int64
	)
	popts := engine.PublishOptions{HistorySize: 100000, HistoryTTL: 10 * time.Minute}
	for p := range publishers {
		n := nodes[p%len(nodes)]
		wg.Go(func() {
			for i := 0; !stopped.Load(); i++ {
				// A failed attempt may still have committed: each attempt
				// carries data of its own, and only acknowledged ones are
				// required below.
				for attempt := 0; ; attempt++ {
					data := fmt.Sprintf(`"%d.%d.%d"`, p, i, attempt)
					actx, acancel := context.WithTimeout(ctx, 5*time.Second)
					sp, err := n.e.Publish(actx, ch, &engine.Publication{Data: []byte(data)}, popts)
					acancel()
					if err == nil {
						mu.Lock()
						acked[data] = sp
						mu.Unlock()
						if faultAt.Load() != 0 {
							resumed.CompareAndSwap(0, time.Now().UnixNano())
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
		defer stopped.Store(true)
		for done.Load() < before && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		// As in a crash: the primary goes first, and until the standby
		// is promoted no host accepts writes.
		pgTool(t, "pg_ctl", "-D", primary.dir, "-m", "immediate", "-w", "stop")
		faultAt.Store(time.Now().UnixNano())
		pgTool(t, "pg_ctl", "-D", standby.dir, "-w", "promote")
		t.Logf("standby promoted %v after the primary stopped", time.Duration(time.Now().UnixNano()-faultAt.Load()))
		awaitResumed(t, ctx, nodes, ch, &mu, acked, faultAt.Load())
		n := done.Load()
		start := time.Now()
		for (done.Load() < n+afterMin || time.Since(start) < afterTime) && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
	})
	wg.Wait()
	<-stop
	if ctx.Err() != nil {
		t.Fatalf("stream did not finish: %d acknowledged", done.Load())
	}
	t.Logf("%d publications acknowledged, %d failed attempts retried; publishing resumed %v after the primary stopped",
		done.Load(), failures.Load(), time.Duration(resumed.Load()-faultAt.Load()))

	for _, n := range nodes {
		checkAckedDelivered(t, "node "+n.name, n.rec, ch, acked)
		t.Logf("node %s: reconnects %.0f, replayed %.0f, gap repairs %.0f, lost %.0f", n.name,
			testutil.ToFloat64(n.e.metrics.reconnects), testutil.ToFloat64(n.e.metrics.replayed),
			testutil.ToFloat64(n.e.metrics.gapRepairs), testutil.ToFloat64(n.e.metrics.lost))
		if testutil.ToFloat64(n.e.metrics.reconnects) == 0 {
			t.Errorf("node %s never reconnected its listener", n.name)
		}
	}
}

// awaitResumed logs how long after the fault each node delivered a
// publication the new primary acknowledged.
func awaitResumed(t *testing.T, ctx context.Context, nodes []*streamNode, ch string, mu *sync.Mutex, acked map[string]engine.StreamPosition, fault int64) {
	t.Helper()
	// The highest offset acknowledged so far was committed before the
	// fault: anything beyond it came from the new primary.
	mu.Lock()
	var before uint64
	for _, sp := range acked {
		before = max(before, sp.Offset)
	}
	mu.Unlock()
	for _, n := range nodes {
		for {
			got := n.rec.get(ch)
			if len(got) > 0 && got[len(got)-1].sp.Offset > before {
				mu.Lock()
				_, ok := acked[string(got[len(got)-1].pub.Data)]
				mu.Unlock()
				if ok {
					break
				}
			}
			if ctx.Err() != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Logf("node %s delivers from the new primary %v after the primary stopped", n.name, time.Duration(time.Now().UnixNano()-fault))
	}
}

// checkAckedDelivered waits until rec holds every acknowledged publication
// of ch, then checks that each came exactly once, at its acknowledged
// position, in offset order. Publications not acknowledged may or may not
// have been committed: they are counted, not judged.
func checkAckedDelivered(t *testing.T, node string, rec *recorder, ch string, acked map[string]engine.StreamPosition) {
	t.Helper()
	rec.await(t, 30*time.Second, node+" to deliver every acknowledged publication", func() bool {
		seen := 0
		for _, d := range rec.pubs[ch] {
			if _, ok := acked[string(d.pub.Data)]; ok {
				seen++
			}
		}
		return seen >= len(acked)
	})
	var got []enginetest.Delivery
	for _, d := range rec.get(ch) {
		got = append(got, enginetest.Delivery{Pub: d.pub, Position: d.sp})
	}
	others := enginetest.CheckAcknowledgedOnce(t, node, got, acked)
	t.Logf("%s: %d deliveries: %d acknowledged, %d not acknowledged", node, len(got), len(acked), others)
}
