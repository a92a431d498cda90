package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func logicalOptions(dsn, schema, node string) Config {
	o := testOptions(dsn, schema)
	o.NodeID = node
	o.Logical = LogicalConfig{Enabled: true, CheckInterval: 100 * time.Millisecond}
	return o
}

// TestLogicalStreamExactlyOnce streams a table written by plain SQL
// (outside Herald), kills (SIGKILL) the process that consumes the slot in
// the middle of the writes, and checks that a subscriber sees every row
// change once, in commit order, with contiguous offsets, as the standby
// node takes over. The consumers confirm no position while the test
// runs (StatusInterval is an hour), so the standby is sent again every
// transaction the killed node published, and must skip each.
func TestLogicalStreamExactlyOnce(t *testing.T) {
	dsn := logicalCluster(t)
	schema := "herald"
	conn := sqlConn(t, dsn)
	ctx := t.Context()

	rec := newRecorder()
	observer := startEngine(t, testOptions(dsn, schema), rec) // migrates; consumes nothing
	if err := observer.Subscribe(ctx, "lorders:1"); err != nil {
		t.Fatal(err)
	}
	sqlExec(t, conn, `CREATE TABLE orders (id int PRIMARY KEY, customer int NOT NULL, status text, body jsonb, big text)`)
	sqlExec(t, conn, `SELECT herald.stream_table('orders', 'lorders:{customer}', ARRAY['id','status','body','big'], 100000, '1 hour',
		mode => 'logical', tags => ARRAY['status'])`)

	// Node a is a process of its own (this test binary running
	// TestLogicalConsumerProcess), so that it can be killed.
	var childLog testenv.LockedBuffer
	child := exec.Command(os.Args[0], "-test.run=^TestLogicalConsumerProcess$", "-test.count=1", "-test.v")
	child.Env = append(os.Environ(), childDSNVar+"="+dsn)
	child.Stdout, child.Stderr = &childLog, &childLog
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	kill := func() {
		if !killed {
			killed = true
			_ = child.Process.Kill()
			_ = child.Wait()
		}
	}
	t.Cleanup(kill)
	awaitSlotActive(t, conn, "herald_streams")
	var app string
	if err := conn.QueryRow(ctx, `SELECT a.application_name FROM pg_replication_slots s JOIN pg_stat_activity a ON a.pid = s.active_pid
		WHERE s.slot_name = 'herald_streams'`).Scan(&app); err != nil || app != "herald-logical:node-a" {
		t.Fatalf("the slot is consumed by %q (%v), want node a's process; its output:\n%s", app, err, childLog.String())
	}
	optsB := logicalOptions(dsn, schema, "node-b")
	optsB.Logical.StatusInterval = time.Hour
	b := startEngine(t, optsB, newRecorder())

	// want is the sequence of changes the subscriber must see.
	type ev struct {
		op, status string
		id         float64
	}
	var want []ev
	const rows = 300
	writer, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close(context.Background())
	big := strings.Repeat("z", 9000) // over a notification: takes the spill path
	for i := 1; i <= rows; i++ {
		if i == rows/3 {
			// Wait until node a published some, then stop it while the
			// writes go on.
			rec.awaitN(t, "lorders:1", len(want)/2)
			kill()
		}
		tx, err := writer.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		note := ""
		if i%50 == 0 {
			note = big
		}
		if _, err := tx.Exec(ctx, `INSERT INTO orders VALUES ($1, 1, 'new', jsonb_build_object('n', $1::int), $2)`, i, note); err != nil {
			t.Fatal(err)
		}
		want = append(want, ev{"insert", "new", float64(i)})
		if i%5 == 0 {
			if _, err := tx.Exec(ctx, `UPDATE orders SET status = 'shipped' WHERE id = $1`, i); err != nil {
				t.Fatal(err)
			}
			want = append(want, ev{"update", "shipped", float64(i)})
		}
		if i%7 == 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM orders WHERE id = $1`, i-1); err != nil {
				t.Fatal(err)
			}
			want = append(want, ev{"delete", "", float64(i - 1)})
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got := rec.awaitN(t, "lorders:1", len(want))
	for i, c := range changesOf(t, got) {
		row := c.New
		if c.Op == "delete" {
			row = c.Old
		}
		g := ev{c.Op, "", 0}
		if row != nil {
			g.id, _ = row["id"].(float64)
			if c.Op != "delete" {
				g.status, _ = row["status"].(string)
			}
		}
		if g != want[i] {
			t.Fatalf("change %d is %+v, want %+v", i, g, want[i])
		}
		if got[i].sp.Offset != uint64(i+1) {
			t.Fatalf("change %d at offset %d", i, got[i].sp.Offset)
		}
		if body, _ := row["body"].(map[string]any); body["n"] != g.id {
			t.Fatalf("change %d: jsonb column came as %v, want the object {\"n\": %v}", i, row["body"], g.id)
		}
		if c.Op != "delete" && got[i].pub.Tags["status"] != g.status {
			t.Fatalf("change %d: tags %v, want status %q", i, got[i].pub.Tags, g.status)
		}
		if int(g.id)%50 == 0 && c.Op == "insert" && row["big"] != big {
			t.Fatalf("change %d: large row lost its column", i)
		}
	}
	// Nothing more arrives: no change was published twice.
	if _, err := observer.Publish(ctx, "lorders:1", &engine.Publication{Data: []byte(`{"op":"marker"}`)}, withHistory(100000)); err != nil {
		t.Fatal(err)
	}
	all := rec.awaitN(t, "lorders:1", len(want)+1)
	if len(all) != len(want)+1 || string(all[len(want)].pub.Data) != `{"op":"marker"}` {
		t.Fatalf("%d deliveries, want %d and the marker: a change was delivered twice", len(all), len(want)+1)
	}
	pubs, _, err := observer.History(ctx, "lorders:1", engine.HistoryRequest{Limit: -1})
	if err != nil || len(pubs) != len(want)+1 {
		t.Fatalf("history holds %d publications (%v), want %d", len(pubs), err, len(want)+1)
	}
	if testutil.ToFloat64(b.logical.owner) != 1 {
		t.Error("node b did not take the slot over")
	}
	if testutil.ToFloat64(b.logical.skipped) == 0 {
		t.Error("node b skipped no transaction, though node a confirmed none of those it published")
	}
}

// childDSNVar gives TestLogicalConsumerProcess its database.
const childDSNVar = "HERALD_TEST_LOGICAL_CHILD_DSN"

// TestLogicalConsumerProcess is node a of TestLogicalStreamExactlyOnce, run
// in a process of its own that the test kills; alone it does nothing.
func TestLogicalConsumerProcess(t *testing.T) {
	dsn := os.Getenv(childDSNVar)
	if dsn == "" {
		t.Skip("the consumer process of TestLogicalStreamExactlyOnce, which runs it")
	}
	opts := logicalOptions(dsn, "herald", "node-a")
	opts.Logical.StatusInterval = time.Hour
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	startEngine(t, opts, newRecorder())
	// Until the test kills the process.
	select {
	case <-t.Context().Done():
	case <-time.After(2 * time.Minute):
		t.Fatal("not killed within 2 minutes")
	}
}

// TestLogicalSlotOverLimitDropped leaves the slot unconsumed while more
// WAL than its limit is written: the next node to own it drops it with an
// error log and the metric, makes a new one and streams again.
func TestLogicalSlotOverLimitDropped(t *testing.T) {
	dsn := logicalCluster(t)
	conn := sqlConn(t, dsn)
	ctx := t.Context()
	rec := newRecorder()
	observer := startEngine(t, testOptions(dsn, "herald"), rec)
	if err := observer.Subscribe(ctx, "items"); err != nil {
		t.Fatal(err)
	}
	sqlExec(t, conn, `CREATE TABLE items (id int PRIMARY KEY)`)
	sqlExec(t, conn, `SELECT herald.stream_table('items', 'items', mode => 'logical')`)
	opts := logicalOptions(dsn, "herald", "node-a")
	opts.Logical.MaxRetainedBytes = 4 << 20
	a := startEngine(t, opts, newRecorder())
	awaitSlotActive(t, conn, "herald_streams")
	sqlExec(t, conn, `INSERT INTO items VALUES (1)`)
	rec.awaitN(t, "items", 1)
	closeEngine(t, a)

	// About 12 MB of WAL nobody consumes.
	sqlExec(t, conn, `CREATE TABLE filler (x text)`)
	sqlExec(t, conn, `INSERT INTO filler SELECT md5(g::text) || repeat('x', 1000) FROM generate_series(1, 10000) g`)
	sqlExec(t, conn, `INSERT INTO items VALUES (2)`) // lost with the slot

	var logs testenv.LockedBuffer
	opts.NodeID = "node-b"
	opts.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))
	b := startEngine(t, opts, newRecorder())
	testenv.Eventually(t, "the slot dropped", 30*time.Second, func() bool { return testutil.ToFloat64(b.logical.dropped) == 1 })
	if !strings.Contains(logs.String(), "DROPPED logical replication slot") || !strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("no error log for the dropped slot: %q", logs.String())
	}
	awaitSlotActive(t, conn, "herald_streams")
	// A session that skips triggers is streamed all the same.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO items VALUES (3)`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got := changesOf(t, rec.awaitN(t, "items", 2))
	if got[1].New["id"] != float64(3) {
		t.Fatalf("after the new slot: %+v, want the insert of 3", got[1])
	}
	if testutil.ToFloat64(b.logical.missing) != 0 {
		t.Error("a slot Herald dropped itself was also counted missing")
	}

	// A slot dropped behind Herald's back (or not carried over by a
	// failover) is as loud.
	closeEngine(t, b)
	// The stopped node's walsender may take a moment to exit.
	testenv.Eventually(t, "the slot dropped by hand", 10*time.Second, func() bool {
		_, err := conn.Exec(ctx, `SELECT pg_drop_replication_slot('herald_streams')`)
		return err == nil
	})
	var logsC testenv.LockedBuffer
	opts.NodeID = "node-c"
	opts.Logger = slog.New(slog.NewTextHandler(&logsC, &slog.HandlerOptions{Level: slog.LevelError}))
	c := startEngine(t, opts, newRecorder())
	testenv.Eventually(t, "the missing slot counted", 30*time.Second, func() bool { return testutil.ToFloat64(c.logical.missing) == 1 })
	if !strings.Contains(logsC.String(), "slot was MISSING") || !strings.Contains(logsC.String(), "level=ERROR") {
		t.Fatalf("missing slot: metric %v, logs %q", testutil.ToFloat64(c.logical.missing), logsC.String())
	}
}

// TestStreamTableModes checks both modes' tags and the errors of bad
// definitions; the trigger mode runs on the shared test server.
func TestStreamTableModes(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	rec := newRecorder()
	e := startEngine(t, testOptions(dsn, schema), rec)
	conn := sqlConn(t, dsn)
	ctx := t.Context()
	tbl := schema + ".parcels"
	sqlExec(t, conn, `CREATE TABLE `+tbl+` (id int PRIMARY KEY, status text, region text)`)
	sqlExec(t, conn, `SELECT `+schema+`.stream_table($1, 'parcels', tags => ARRAY['status', 'region'])`, tbl)
	if err := e.Subscribe(ctx, "parcels"); err != nil {
		t.Fatal(err)
	}
	sqlExec(t, conn, `INSERT INTO `+tbl+` VALUES (1, 'shipped', NULL)`)
	sqlExec(t, conn, `DELETE FROM `+tbl+` WHERE id = 1`)
	got := rec.awaitN(t, "parcels", 2)
	for i, d := range got {
		if fmt.Sprint(d.pub.Tags) != "map[status:shipped]" {
			t.Errorf("publication %d: tags %v, want status=shipped (a NULL column is left out)", i, d.pub.Tags)
		}
	}
	var level string
	if err := conn.QueryRow(ctx, `SHOW wal_level`).Scan(&level); err != nil {
		t.Fatal(err)
	}
	bad := []struct{ q, want string }{
		{`SELECT ` + schema + `.stream_table($1, 'parcels', mode => 'wal')`, "mode must be 'trigger' or 'logical'"},
		{`SELECT ` + schema + `.stream_table($1, 'parcels', tags => ARRAY['nope'])`, "nope is not a column"},
	}
	if level != "logical" {
		bad = append(bad, struct{ q, want string }{`SELECT ` + schema + `.stream_table($1, 'parcels', mode => 'logical')`, "needs wal_level = logical"})
	}
	for _, b := range bad {
		if _, err := conn.Exec(ctx, b.q, tbl); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: %v, want an error with %q", b.q, err, b.want)
		}
	}
}

// TestLogicalConfigRefused: a bad slot name or a negative limit is an
// error of New naming it, not a silent default.
func TestLogicalConfigRefused(t *testing.T) {
	for _, l := range []LogicalConfig{{Slot: "Bad-Name"}, {MaxRetainedBytes: -1}} {
		_, err := New(context.Background(), Config{DSN: "postgres://127.0.0.1:1/x", Logical: l})
		if err == nil || !strings.Contains(err.Error(), "logical") {
			t.Errorf("%+v: %v, want an error naming the logical option", l, err)
		}
	}
}

// TestLogicalDroppedTable: changes of a table dropped before they are
// published are skipped, and the stream goes on with the next ones.
func TestLogicalDroppedTable(t *testing.T) {
	dsn := logicalCluster(t)
	conn := sqlConn(t, dsn)
	ctx := t.Context()
	rec := newRecorder()
	observer := startEngine(t, testOptions(dsn, "herald"), rec)
	if err := observer.Subscribe(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
	opts := logicalOptions(dsn, "herald", "node-a")
	a := startEngine(t, opts, newRecorder())
	awaitSlotActive(t, conn, "herald_streams")
	closeEngine(t, a)
	for _, tbl := range []string{"gone", "kept"} {
		sqlExec(t, conn, `CREATE TABLE `+tbl+` (id int PRIMARY KEY)`)
		sqlExec(t, conn, `SELECT herald.stream_table($1::regclass, $1::text, mode => 'logical')`, tbl)
	}
	sqlExec(t, conn, `INSERT INTO gone VALUES (1)`)
	sqlExec(t, conn, `DROP TABLE gone`)
	sqlExec(t, conn, `INSERT INTO kept VALUES (2)`)
	opts.NodeID = "node-b"
	startEngine(t, opts, newRecorder())
	if got := changesOf(t, rec.awaitN(t, "kept", 1)); got[0].New["id"] != float64(2) {
		t.Fatalf("kept: %+v", got[0])
	}
}

// TestLogicalSlotOverLimitWhileConsuming: the owner itself notices its
// slot passing the limit (here because it confirms nothing: StatusInterval
// is an hour), stops, drops the slot loudly and streams from a new one.
func TestLogicalSlotOverLimitWhileConsuming(t *testing.T) {
	dsn := logicalCluster(t)
	conn := sqlConn(t, dsn)
	ctx := t.Context()
	rec := newRecorder()
	observer := startEngine(t, testOptions(dsn, "herald"), rec)
	if err := observer.Subscribe(ctx, "items"); err != nil {
		t.Fatal(err)
	}
	sqlExec(t, conn, `CREATE TABLE items (id int PRIMARY KEY)`)
	sqlExec(t, conn, `SELECT herald.stream_table('items', 'items', mode => 'logical')`)
	opts := logicalOptions(dsn, "herald", "node-a")
	opts.Logical.MaxRetainedBytes = 4 << 20
	opts.Logical.StatusInterval = time.Hour
	var logs testenv.LockedBuffer
	opts.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))
	a := startEngine(t, opts, newRecorder())
	awaitSlotActive(t, conn, "herald_streams")
	sqlExec(t, conn, `CREATE TABLE filler (x text)`)
	sqlExec(t, conn, `INSERT INTO filler SELECT md5(g::text) || repeat('x', 1000) FROM generate_series(1, 10000) g`)
	testenv.Eventually(t, "the slot dropped", 30*time.Second, func() bool { return testutil.ToFloat64(a.logical.dropped) == 1 })
	if !strings.Contains(logs.String(), "DROPPED logical replication slot") {
		t.Fatalf("no error log for the dropped slot: %q", logs.String())
	}
	if !strings.Contains(logs.String(), "retained_bytes=") {
		t.Errorf("the drop's log does not say how much the slot held back: %q", logs.String())
	}
	awaitSlotActive(t, conn, "herald_streams")
	sqlExec(t, conn, `INSERT INTO items VALUES (1)`)
	if got := changesOf(t, rec.awaitN(t, "items", 1)); got[0].New["id"] != float64(1) {
		t.Fatalf("after the new slot: %+v", got[0])
	}
}
