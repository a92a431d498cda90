package postgres

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

// TestMeasureStreamModes compares trigger and logical table streams on a
// private wal_level = logical cluster: the writing transaction's cost per
// row (a 10,000-row INSERT into a streamed table against the same into an
// unstreamed one), commit-to-delivery latency of single-row transactions,
// and the time from the commit of a 10,000-row transaction to the delivery
// of its last change. It runs only with HERALD_TEST_MEASURE=1 and logs
// the figures (-v).
func TestMeasureStreamModes(t *testing.T) {
	if os.Getenv("HERALD_TEST_MEASURE") != "1" {
		t.Skip("a measurement: set HERALD_TEST_MEASURE=1 and run with -v")
	}
	dsn := logicalCluster(t)
	conn := sqlConn(t, dsn)
	ctx := t.Context()
	rec := newRecorder()
	e := startEngine(t, logicalOptions(dsn, "herald", "node-a"), rec)
	awaitSlotActive(t, conn, "herald_streams")
	const rows = 10000
	insert := func(tbl string, ch int) time.Duration {
		start := time.Now()
		sqlExec(t, conn, fmt.Sprintf(`INSERT INTO %s (ch, v) SELECT %d, md5(g::text) FROM generate_series(1, %d) g`, tbl, ch, rows))
		return time.Since(start)
	}
	for _, tbl := range []string{"plain", "trig", "logi"} {
		sqlExec(t, conn, `CREATE TABLE `+tbl+` (id bigserial PRIMARY KEY, ch int NOT NULL, v text)`)
	}
	sqlExec(t, conn, `SELECT herald.stream_table('trig', 'trig:{ch}', history_size => 20000, history_ttl => '1 hour')`)
	sqlExec(t, conn, `SELECT herald.stream_table('logi', 'logi:{ch}', history_size => 20000, history_ttl => '1 hour', mode => 'logical')`)
	for _, ch := range []string{"trig:0", "logi:0", "trig:1", "logi:1", "trig:2", "logi:2"} {
		if err := e.Subscribe(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	// Warm up once, then take the best of three for the writing cost.
	insert("plain", 0)
	best := func(tbl string) time.Duration {
		d := time.Duration(1 << 62)
		for range 3 {
			d = min(d, insert(tbl, 0))
		}
		return d
	}
	plain, trig, logi := best("plain"), best("trig"), best("logi")
	perRow := func(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d-plain)/float64(rows)/1e3) }
	t.Logf("10,000-row INSERT: unstreamed %v, trigger %v (+%s per row), logical %v (+%s per row)",
		plain.Round(time.Millisecond), trig.Round(time.Millisecond), perRow(trig), logi.Round(time.Millisecond), perRow(logi))

	// The logical stream publishes those rows after their commits: let it
	// catch up before timing anything else.
	rec.awaitN(t, "trig:0", 3*rows)
	rec.awaitN(t, "logi:0", 3*rows)
	for _, mode := range []string{"trig", "logi"} {
		ch := mode + ":1"
		var lat []time.Duration
		for i := range 200 {
			start := time.Now()
			sqlExec(t, conn, `INSERT INTO `+mode+` (ch, v) VALUES (1, 'x')`)
			rec.awaitN(t, ch, i+1)
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		t.Logf("%s: single-row transaction, commit to delivery: p50 %v p99 %v max %v", mode,
			lat[len(lat)/2].Round(10*time.Microsecond), lat[len(lat)*99/100].Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))

		ch = mode + ":2"
		start := time.Now()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (ch, v) SELECT 2, md5(g::text) FROM generate_series(1, %d) g`, mode, rows)); err != nil {
			t.Fatal(err)
		}
		commitStart := time.Now()
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		committed := time.Now()
		rec.awaitN(t, ch, rows)
		done := time.Since(start)
		t.Logf("%s: 10,000-row transaction: statement %v, commit %v, last delivery %v after the commit (%.0f rows/s end to end)",
			mode, commitStart.Sub(start).Round(time.Millisecond), committed.Sub(commitStart).Round(time.Millisecond),
			time.Since(committed).Round(time.Millisecond), rows/done.Seconds())
	}
}
