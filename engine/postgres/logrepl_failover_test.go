package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// pgMajor returns the major version of the server programs in pgBin.
func pgMajor(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// --version is answered before the server's refusal to run as root.
	out, err := exec.CommandContext(ctx, filepath.Join(pgBin(), "postgres"), "--version").Output()
	if err != nil {
		t.Fatalf("postgres --version (%s): %v", pgBin(), err)
	}
	m := regexp.MustCompile(`\(PostgreSQL\) (\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("postgres --version: no version in %q", out)
	}
	v, _ := strconv.Atoi(string(m[1]))
	return v
}

// TestLogicalFailoverSlot follows a logical table stream across the
// promotion of a standby, as docs/postgres.md ("PostgreSQL failover")
// tells deployments on PostgreSQL 17 and later to set it up: the slot is
// created with failover => true before Herald starts, the standby
// synchronizes it (sync_replication_slots, through its own physical slot
// with hot_standby_feedback and a primary_conninfo naming the database),
// and the primary lists that physical slot in synchronized_standby_slots,
// so that no change reaches Herald before the standby has it. Replication
// is synchronous (makePrimary), so a committed row, and Herald's own
// publishing transaction, are on the standby before their commit returns.
//
// The rows committed after the slot's last synchronization are the point.
// The standby's slot synchronization is switched off once the slot is
// ready, so that its copy stays behind by a known margin (as it does by
// itself for up to 30 s on an idle primary, the slot sync worker's
// longest nap): rows that Herald published and confirmed on the old
// primary after that are sent again by the promoted server's slot and must
// be skipped (logical_progress came over with the WAL), and rows committed
// just before the crash, not yet published, must come from the new
// primary. Then rows written on the new primary. A subscriber must see
// every row once, in commit order, with contiguous offsets.
func TestLogicalFailoverSlot(t *testing.T) {
	if _, err := os.Stat(filepath.Join(pgBin(), "initdb")); err != nil {
		if os.Getenv(testenv.RequireServices) == "1" {
			t.Fatalf("PostgreSQL server programs (%s): %v", pgBinVar, err)
		}
		t.Skipf("PostgreSQL server programs are not installed (%s): %v", pgBinVar, err)
	}
	if v := pgMajor(t); v < 17 {
		t.Skipf("PostgreSQL %d (%s): failover slots (failover => true, sync_replication_slots) need PostgreSQL 17 or later; set %s to newer server programs",
			v, pgBin(), pgBinVar)
	}
	const physSlot = "herald_standby"
	dir := failoverDir(t)
	primary := makePrimary(t, dir)
	appendConf(t, primary.dir, `
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
synchronized_standby_slots = '`+physSlot+`'
`)
	standby := makeStandby(t, dir, primary)
	// The standby has the primary's settings. Promoted, it has no slot
	// physSlot: with it still listed, the stream of a failover slot would
	// wait for that standby for ever.
	appendConf(t, standby.dir, fmt.Sprintf(`
primary_conninfo = 'host=127.0.0.1 port=%d user=herald dbname=postgres application_name=standby'
primary_slot_name = '%s'
hot_standby_feedback = on
sync_replication_slots = on
synchronized_standby_slots = ''
`, primary.port, physSlot))
	// Until the standby runs, the primary commits without it: the slot
	// is made before the standby starts, so that the standby's slot sync
	// worker finds it at once rather than after its nap, which grows to
	// 30 s while the primary has no failover slot.
	appendConf(t, primary.dir, "synchronous_standby_names = ''\n")
	primary.start(t)
	ctx := t.Context()
	pconn := sqlConn(t, "postgres://herald@"+primary.addr()+"/postgres?sslmode=disable")
	sqlExec(t, pconn, `SELECT pg_create_physical_replication_slot($1, true)`, physSlot)

	// Every connection of the nodes lists both servers, as TestFailover's.
	dsn := fmt.Sprintf("postgres://herald@%s,%s/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		primary.addr(), standby.addr())
	const ch = "forders"
	rec := newRecorder()
	observer := startEngine(t, testOptions(dsn, "herald"), rec) // migrates; consumes nothing
	if err := observer.Subscribe(ctx, ch); err != nil {
		t.Fatal(err)
	}
	sqlExec(t, pconn, `CREATE TABLE orders (id int PRIMARY KEY, phase text NOT NULL)`)
	sqlExec(t, pconn, `SELECT herald.stream_table('orders', 'forders', history_size => 100000, history_ttl => '1 hour', mode => 'logical')`)
	// As the docs tell users: the slot, with failover, before Herald
	// would make one without.
	const slot = "herald_streams"
	sqlExec(t, pconn, `SELECT pg_create_logical_replication_slot($1, 'pgoutput', failover => true)`, slot)

	standby.start(t)
	sqlExec(t, pconn, `ALTER SYSTEM SET synchronous_standby_names = '*'`)
	sqlExec(t, pconn, `SELECT pg_reload_conf()`)
	awaitSync(t, primary)
	sconn := sqlConn(t, "postgres://herald@"+standby.addr()+"/postgres?sslmode=disable")

	opts := logicalOptions(dsn, "herald", "node-a")
	opts.Logical.StatusInterval = 100 * time.Millisecond
	consumer := startEngine(t, opts, newRecorder())
	awaitSlotActive(t, pconn, slot)

	writer, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { writer.Close(context.Background()) }()
	next := 1
	write := func(n int, phase string) {
		t.Helper()
		for range n {
			if _, err := writer.Exec(ctx, `INSERT INTO orders VALUES ($1, $2)`, next, phase); err != nil {
				t.Fatalf("insert %d (%s): %v", next, phase, err)
			}
			next++
		}
	}

	// 1. Rows streamed while the standby makes its copy of the slot ready
	// for failover, as PostgreSQL's docs tell to check before a switch.
	write(50, "synced")
	rec.awaitN(t, ch, next-1)
	start := time.Now()
	var standbyConfirmed string
	nudged, nudges := time.Now(), 0
	// A copy made while the primary's slot still needs older WAL or
	// catalog rows than the standby can keep for it stays temporary until
	// the primary's slot moves past it. That slot's restart_lsn moves only
	// at a running-transactions record, which PostgreSQL logs every 15 s;
	// and the worker, finding nothing to persist, naps ever longer (0.2 s
	// doubling to 30 s): 25 s was seen. So the test logs that record
	// itself, with a row for the consumer to confirm.
	testenv.Eventually(t, "the slot synchronized to the standby, ready for failover", 2*time.Minute, func() bool {
		var ready, failover bool
		err := sconn.QueryRow(ctx, `SELECT synced AND NOT temporary AND invalidation_reason IS NULL, failover, confirmed_flush_lsn::text
			FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&ready, &failover, &standbyConfirmed)
		if err == nil && ready && !failover {
			t.Fatal("the synchronized slot has failover false")
		}
		if !ready && time.Since(nudged) > 200*time.Millisecond {
			write(1, "synced")
			sqlExec(t, pconn, `SELECT pg_log_standby_snapshot()`)
			nudged = time.Now()
			nudges++
		}
		return err == nil && ready
	})
	rec.awaitN(t, ch, next-1)
	t.Logf("slot ready for failover on the standby %v after the first rows were delivered (%d nudges)", time.Since(start), nudges)

	// 2. Freeze the standby's copy of the slot where it is.
	sqlExec(t, sconn, `ALTER SYSTEM SET sync_replication_slots = off`)
	sqlExec(t, sconn, `SELECT pg_reload_conf()`)
	testenv.Eventually(t, "the slot sync worker stopped", 30*time.Second, func() bool {
		var n int
		err := sconn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'slotsync worker'`).Scan(&n)
		return err == nil && n == 0
	})
	if err := sconn.QueryRow(ctx, `SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&standbyConfirmed); err != nil {
		t.Fatal(err)
	}

	// 3. Rows published and confirmed on the primary after the last
	// synchronization: the promoted server's slot sends them again.
	const published = 40
	write(published, "unsynced")
	rec.awaitN(t, ch, next-1)
	var after bool
	testenv.Eventually(t, "the primary's slot confirmed past the standby's copy", 10*time.Second, func() bool {
		err := pconn.QueryRow(ctx, `SELECT confirmed_flush_lsn > $2::pg_lsn FROM pg_replication_slots WHERE slot_name = $1`,
			slot, standbyConfirmed).Scan(&after)
		return err == nil && after
	})

	// 4. Rows committed just before the crash, most not yet published.
	write(30, "crash")
	committed := next - 1
	pgTool(t, "pg_ctl", "-D", primary.dir, "-m", "immediate", "-w", "stop")
	crashed := time.Now()
	pgTool(t, "pg_ctl", "-D", standby.dir, "-w", "promote")
	t.Logf("%d rows committed; the primary stopped, the standby promoted in %v; %d rows delivered before the stop",
		committed, time.Since(crashed), len(rec.get(ch)))

	// 5. Rows written on the new primary.
	writer.Close(context.Background())
	testenv.Eventually(t, "a writable server", 30*time.Second, func() bool {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return false
		}
		writer = c
		return true
	})
	write(50, "promoted")
	rec.awaitN(t, ch, next-1)
	t.Logf("every row delivered %v after the primary stopped", time.Since(crashed))

	// Nothing more arrives: no row was published twice. The stream is in
	// commit order, so a transaction published again would come before
	// this last one.
	write(1, "last")
	rows := next - 1
	got := rec.awaitN(t, ch, rows)
	if len(got) != rows {
		t.Fatalf("%d deliveries, want %d: a row was delivered twice", len(got), rows)
	}
	for i, c := range changesOf(t, got) {
		if c.Op != "insert" || c.New["id"] != float64(i+1) {
			t.Fatalf("delivery %d is %+v, want the insert of row %d", i, c, i+1)
		}
		if got[i].sp.Offset != uint64(i+1) {
			t.Fatalf("delivery %d at offset %d", i, got[i].sp.Offset)
		}
	}
	// The pools may still hold a connection to the old primary, which
	// fails once.
	var pubs []*engine.Publication
	testenv.Eventually(t, "the history", 10*time.Second, func() bool {
		pubs, _, err = observer.History(ctx, ch, engine.HistoryRequest{Limit: -1})
		return err == nil
	})
	if len(pubs) != rows {
		t.Fatalf("history holds %d publications, want %d", len(pubs), rows)
	}

	// The promoted server's slot was the synchronized one, behind.
	skipped := testutil.ToFloat64(consumer.logical.skipped)
	t.Logf("consumer: %.0f transactions published, %.0f sent again and skipped, slot missing %.0f, dropped %.0f",
		testutil.ToFloat64(consumer.logical.transactions), skipped,
		testutil.ToFloat64(consumer.logical.missing), testutil.ToFloat64(consumer.logical.dropped))
	if m, d := testutil.ToFloat64(consumer.logical.missing), testutil.ToFloat64(consumer.logical.dropped); m != 0 || d != 0 {
		t.Errorf("the consumer counted the slot missing %v and dropped %v times: it did not resume the synchronized slot", m, d)
	}
	if skipped < published {
		t.Errorf("the consumer skipped %v transactions sent again, want at least the %d published after the last synchronization", skipped, published)
	}
	var synced bool
	if err := writer.QueryRow(ctx, `SELECT synced FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&synced); err != nil || !synced {
		t.Errorf("the new primary's slot: synced %v (%v), want the synchronized slot, not one made after the promotion", synced, err)
	}
}
