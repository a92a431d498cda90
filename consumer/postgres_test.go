package consumer_test

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/consumer"
	"github.com/heraldhq/herald/internal/test/testenv"
	"github.com/jackc/pgx/v5/pgxpool"
)

// outbox is a Centrifugo-shaped outbox table of its own for one test.
type outbox struct {
	dsn   string
	pool  *pgxpool.Pool
	table string
	chans string // the NOTIFY channel
}

func newOutbox(t *testing.T) *outbox { return newOutboxOf(t, "JSONB") }

// newOutboxOf is an outbox table whose payload column is of payloadType.
func newOutboxOf(t *testing.T, payloadType string) *outbox {
	t.Helper()
	dsn := testenv.Require(t, "HERALD_TEST_POSTGRES_DSN")
	testenv.LockPostgres(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	o := &outbox{dsn: dsn, pool: pool, table: "herald_test_outbox_" + strconv.FormatInt(time.Now().UnixNano(), 36), chans: "herald_test_outbox"}
	// Centrifugo's documented outbox table.
	o.exec(t, `CREATE TABLE `+o.table+` (
		id BIGSERIAL PRIMARY KEY,
		method text NOT NULL,
		payload `+payloadType+` NOT NULL,
		partition INTEGER NOT NULL default 0,
		created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL)`)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = pool.Exec(ctx, `DROP TABLE IF EXISTS `+o.table+`, `+o.table+`_dead_letter`)
	})
	return o
}

func (o *outbox) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := o.pool.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// write inserts one command as a producer does: in its own transaction,
// with a NOTIFY naming the partition.
func (o *outbox) write(t *testing.T, partition int, method, payload string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tx, err := o.pool.Begin(ctx)
	if err != nil {
		t.Error(err)
		return
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO `+o.table+` (method, payload, partition) VALUES ($1, $2, $3)`, method, payload, partition); err != nil {
		t.Error(err)
		return
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, o.chans, strconv.Itoa(partition)); err != nil {
		t.Error(err)
		return
	}
	if err := tx.Commit(ctx); err != nil {
		t.Error(err)
	}
}

func (o *outbox) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := o.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (o *outbox) config(name string, partitions int, node string) consumer.Config {
	return consumer.Config{Name: name, Type: consumer.TypePostgres,
		Retry: consumer.Retry{MaxRetries: 2, MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond},
		Postgres: consumer.PostgresConfig{
			DSN: o.dsn + "&application_name=" + node, OutboxTableName: o.table, NumPartitions: partitions,
			// Long: the rows written after the start must be found by
			// NOTIFY, not by polling.
			PartitionPollInterval:        time.Hour,
			PartitionNotificationChannel: o.chans,
		}}
}

func nums(n int) []string {
	var want []string
	for i := 1; i <= n; i++ {
		want = append(want, fmt.Sprintf(`{"n":%d}`, i))
	}
	return want
}

func equal(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("publications\n got %v\nwant %v", got, want)
	}
}

// TestPostgresOutboxDuplicatesOnce: a producer that writes every command
// twice (the same idempotency key) in Centrifugo's outbox format, both the
// method column with the request and the envelope; the subscriber receives
// each publication once, in order, woken by NOTIFY; the rows are deleted.
func TestPostgresOutboxDuplicatesOnce(t *testing.T) {
	o := newOutbox(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	g := runGroup(t, o.config("outbox", 1, "a"), n.exec, "a")
	for i := 1; i <= 30; i++ {
		cmd := publishCmd("news", i, "k"+strconv.Itoa(i))
		o.write(t, 0, "publish", cmd)
		o.write(t, 0, "publish", cmd)
	}
	equal(t, sub.waitFor(t, 30, 10*time.Second), nums(30))
	eventually(t, 5*time.Second, "outbox emptied", func() bool { return o.count(t, o.table) == 0 })
	if got := counter(t, g, "herald_consumer_applied_total", "outbox"); got != 60 {
		t.Fatalf("applied %v, want 60 (each row once; the repeats answered by the idempotency window)", got)
	}
	sub.settle(t, 30, 200*time.Millisecond)
	if h := g.Health()["outbox"]; h != "" {
		t.Fatalf("health %q, want up", h)
	}
}

// TestPostgresOutboxOrderTwoNodes: two nodes consume 4 partitions that 4
// producers fill at once; every partition's publications arrive complete
// and in order, each applied once.
func TestPostgresOutboxOrderTwoNodes(t *testing.T) {
	o := newOutbox(t)
	n := startNode(t)
	const parts, each = 4, 60
	subs := make([]*subscriber, parts)
	for p := range parts {
		subs[p] = subscribe(t, n.hub, "p"+strconv.Itoa(p))
	}
	ga := runGroup(t, o.config("outbox", parts, "a"), n.exec, "a")
	gb := runGroup(t, o.config("outbox", parts, "b"), n.exec, "b")
	orderedTwoGroups(t, subs, each, "outbox", [2]*consumer.Group{ga, gb}, 20*time.Second, func(p, i int) {
		// The envelope form, with the method inside.
		o.write(t, p, "", fmt.Sprintf(`{"method":"publish","payload":%s}`, publishCmd("p"+strconv.Itoa(p), i, "")))
	})
}

// TestPostgresOutboxNodeKilledMidBatch: node a dies (its connection is
// terminated) in the middle of a batch it has half applied; node b, waiting
// for the partition's lock, takes over and applies the whole batch again.
// Nothing is lost, and with idempotency keys nothing reaches the
// subscriber twice.
func TestPostgresOutboxNodeKilledMidBatch(t *testing.T) {
	o := newOutbox(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	for i := 1; i <= 40; i++ {
		o.write(t, 0, "publish", publishCmd("news", i, "k"+strconv.Itoa(i)))
	}
	xa, stuck := hangAt(n.exec, 10) // a node that hangs until it is killed
	ga := runGroup(t, o.config("outbox", 1, "node_a"), xa, "a")
	await(t, stuck, "node a applying its 10th command")
	sub.waitFor(t, 9, 5*time.Second)
	gb := runGroup(t, o.config("outbox", 1, "node_b"), n.exec, "b")
	// b waits for the lock a holds.
	eventually(t, 5*time.Second, "node b waiting for the partition's lock", func() bool {
		var waiting int
		_ = o.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'node_b' AND wait_event_type = 'Lock'`).Scan(&waiting)
		return waiting == 1
	})
	o.exec(t, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'node_a'`)
	equal(t, sub.waitFor(t, 40, 10*time.Second), nums(40))
	stopGroup(t, ga)
	eventually(t, 5*time.Second, "outbox emptied", func() bool { return o.count(t, o.table) == 0 })
	sub.settle(t, 40, 200*time.Millisecond)
	if got := counter(t, gb, "herald_consumer_applied_total", "outbox"); got != 40 {
		t.Fatalf("node b applied %v, want all 40 again", got)
	}
}

// TestPostgresOutboxPoisonMessages: a command the API refuses (unknown
// method) is moved aside at once; one that keeps failing with an error
// that may pass (100) is retried max_retries times, then moved aside; the
// partition goes on with the next rows, and both are counted.
func TestPostgresOutboxPoisonMessages(t *testing.T) {
	o := newOutbox(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	x := &hookExec{next: n.exec}
	x.set(func(_ context.Context, _ string, body []byte) error {
		if strings.Contains(strings.ReplaceAll(string(body), " ", ""), `"n":3}`) {
			return &api.Error{Code: 100, Message: "internal server error"}
		}
		return nil
	})
	g := runGroup(t, o.config("outbox", 1, "a"), x, "a")
	o.write(t, 0, "publish", publishCmd("news", 1, ""))
	o.write(t, 0, "no_such_method", `{}`)
	o.write(t, 0, "publish", publishCmd("news", 2, ""))
	o.write(t, 0, "publish", publishCmd("news", 3, ""))
	o.write(t, 0, "publish", `{"data":{"n":9}}`) // no channel: 107
	o.write(t, 0, "publish", publishCmd("news", 4, ""))
	equal(t, sub.waitFor(t, 3, 10*time.Second), []string{`{"n":1}`, `{"n":2}`, `{"n":4}`})
	eventually(t, 5*time.Second, "outbox emptied", func() bool { return o.count(t, o.table) == 0 })
	if got := o.count(t, o.table+"_dead_letter"); got != 3 {
		t.Fatalf("%d rows moved aside, want 3", got)
	}
	var errs []string
	rows, err := o.pool.Query(context.Background(), `SELECT method || ': ' || error FROM `+o.table+`_dead_letter ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var e string
		_ = rows.Scan(&e)
		errs = append(errs, e)
	}
	if len(errs) != 3 || !strings.Contains(errs[0], "104") || !strings.Contains(errs[1], "100") || !strings.Contains(errs[2], "channel") {
		t.Fatalf("dead letters %q: want the unknown method (104), the failing command (100), the missing channel", errs)
	}
	if f, r := counter(t, g, "herald_consumer_failed_total", "outbox"), counter(t, g, "herald_consumer_retried_total", "outbox"); f != 3 || r != 2 {
		t.Fatalf("failed %v retried %v, want 3 and 2", f, r)
	}
}

// TestPostgresOutboxStopCommitsApplied: a node stopped in the middle of a
// batch deletes exactly the rows it applied; the row it was applying and
// those after it stay for the next node.
func TestPostgresOutboxStopCommitsApplied(t *testing.T) {
	o := newOutbox(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	for i := 1; i <= 20; i++ {
		o.write(t, 0, "publish", publishCmd("news", i, ""))
	}
	x, stuck := hangAt(n.exec, 6)
	g := runGroup(t, o.config("outbox", 1, "a"), x, "a")
	await(t, stuck, "node a applying its 6th command")
	stopGroup(t, g)
	if got := o.count(t, o.table); got != 15 {
		t.Fatalf("%d rows left after the stop, want 15 (5 applied and deleted)", got)
	}
	equal(t, sub.waitFor(t, 5, time.Second), nums(5))
	// The next node starts where the first stopped.
	runGroup(t, o.config("outbox", 1, "b"), n.exec, "b")
	equal(t, sub.waitFor(t, 20, 10*time.Second), nums(20))
}

// TestPostgresOutboxDatabaseRestart: PostgreSQL restarts under a running
// consumer (HERALD_TEST_POSTGRES_RESTART restarts the test server); the
// consumer reconnects, its LISTEN too, and applies what is written after.
func TestPostgresOutboxDatabaseRestart(t *testing.T) {
	restart := strings.Fields(testenv.Require(t, "HERALD_TEST_POSTGRES_RESTART"))
	o := newOutbox(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	cfg := o.config("outbox", 1, "a")
	cfg.Postgres.PartitionPollInterval = time.Second
	g := runGroup(t, cfg, n.exec, "a")
	for i := 1; i <= 5; i++ {
		o.write(t, 0, "publish", publishCmd("news", i, "k"+strconv.Itoa(i)))
	}
	sub.waitFor(t, 5, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, restart[0], restart[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", restart, err, out)
	}
	o.pool.Reset()
	for i := 6; i <= 10; i++ {
		o.write(t, 0, "publish", publishCmd("news", i, "k"+strconv.Itoa(i)))
	}
	equal(t, sub.waitFor(t, 10, 30*time.Second), nums(10))
	eventually(t, 10*time.Second, "healthy again", func() bool { return g.Health()["outbox"] == "" })
}
