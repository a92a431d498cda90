package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
)

// change is a table stream publication's data.
type change struct {
	Op  string         `json:"op"`
	Old map[string]any `json:"old"`
	New map[string]any `json:"new"`
}

func changesOf(t *testing.T, got []delivered) []change {
	t.Helper()
	out := make([]change, len(got))
	for i, d := range got {
		if err := json.Unmarshal(d.pub.Data, &out[i]); err != nil {
			t.Fatalf("delivery %d: %s: %v", i, d.pub.Data, err)
		}
	}
	return out
}

func TestTableStream(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	rec := newRecorder()
	e := startEngine(t, testOptions(dsn, schema), rec)
	conn := sqlConn(t, dsn)
	ctx := t.Context()
	orders := schema + ".orders"
	sqlExec(t, conn, `CREATE TABLE `+orders+` (id bigserial PRIMARY KEY, customer_id int NOT NULL, item text, secret text, note text)`)
	sqlExec(t, conn, `SELECT `+schema+`.stream_table($1, 'orders:{customer_id}', ARRAY['id','customer_id','item','note'], 1000, '10 minutes')`, orders)
	subscribe := func(ch string) {
		t.Helper()
		if err := e.Subscribe(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("InsertUpdateDeleteRollback", func(t *testing.T) {
		subscribe("orders:1")
		subscribe("orders:2")
		sqlExec(t, conn, `INSERT INTO `+orders+` (id, customer_id, item, secret) VALUES (1, 1, 'tea', 'x')`)
		sqlExec(t, conn, `UPDATE `+orders+` SET item = 'green tea' WHERE id = 1`)
		// Rolled back: nothing is delivered.
		sqlExec(t, conn, `BEGIN`)
		sqlExec(t, conn, `INSERT INTO `+orders+` (id, customer_id, item) VALUES (99, 1, 'never')`)
		sqlExec(t, conn, `ROLLBACK`)
		// Moving a row to another customer tells both channels.
		sqlExec(t, conn, `UPDATE `+orders+` SET customer_id = 2 WHERE id = 1`)
		sqlExec(t, conn, `DELETE FROM `+orders+` WHERE id = 1`)
		one := changesOf(t, rec.awaitN(t, "orders:1", 3))
		if one[0].Op != "insert" || one[0].New["item"] != "tea" || one[0].Old != nil || one[0].New["secret"] != nil {
			t.Errorf("insert: %+v (secret must not be sent)", one[0])
		}
		if one[1].Op != "update" || one[1].Old["item"] != "tea" || one[1].New["item"] != "green tea" {
			t.Errorf("update: %+v", one[1])
		}
		if one[2].Op != "update" || one[2].New["customer_id"] != float64(2) {
			t.Errorf("move, on the old channel: %+v", one[2])
		}
		two := changesOf(t, rec.awaitN(t, "orders:2", 2))
		if two[0].Op != "update" || two[1].Op != "delete" || two[1].Old["id"] != float64(1) || two[1].New != nil {
			t.Errorf("orders:2: %+v", two)
		}
		// History keeps them, with the rolled-back insert's offset unused.
		pubs, _, err := e.History(ctx, "orders:1", engine.HistoryRequest{Limit: -1})
		if err != nil || len(pubs) != 3 || pubs[2].Offset != 3 {
			t.Fatalf("history of orders:1: %d publications, err %v", len(pubs), err)
		}
	})

	t.Run("TenThousandRowsInOneTransaction", func(t *testing.T) {
		subscribe("orders:3")
		sqlExec(t, conn, `INSERT INTO `+orders+` (customer_id, item, note) SELECT 3, 'bulk', repeat('x', g % 200) FROM generate_series(1, 10000) g`)
		got := rec.awaitN(t, "orders:3", 10000)
		for i, d := range got {
			if d.sp.Offset != uint64(i+1) {
				t.Fatalf("delivery %d at offset %d", i, d.sp.Offset)
			}
		}
	})

	t.Run("LargeRowSpills", func(t *testing.T) {
		subscribe("orders:4")
		big := strings.Repeat("y", 20000)
		sqlExec(t, conn, `INSERT INTO `+orders+` (customer_id, item, note) VALUES (4, 'big', $1)`, big)
		c := changesOf(t, rec.awaitN(t, "orders:4", 1))
		if c[0].New["note"] != big {
			t.Fatalf("large row: note of %d bytes", len(fmt.Sprint(c[0].New["note"])))
		}
	})

	t.Run("ConcurrentWritersInCommitOrder", func(t *testing.T) {
		// Each transaction takes the next number from a counter row it
		// keeps locked until commit, so numbers follow commit order; the
		// channel's offsets must follow them too.
		subscribe("orders:5")
		sqlExec(t, conn, `CREATE TABLE `+schema+`.counter (n int NOT NULL)`)
		sqlExec(t, conn, `INSERT INTO `+schema+`.counter VALUES (0)`)
		const writers, each = 4, 50
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for range writers {
			wg.Go(func() {
				c, err := pgx.Connect(ctx, dsn)
				if err != nil {
					errs <- err
					return
				}
				defer c.Close(context.Background())
				for range each {
					_, err := c.Exec(ctx, `WITH n AS (UPDATE `+schema+`.counter SET n = n + 1 RETURNING n)
						INSERT INTO `+orders+` (customer_id, item) SELECT 5, n::text FROM n`)
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for i, c := range changesOf(t, rec.awaitN(t, "orders:5", writers*each)) {
			if c.New["item"] != fmt.Sprint(i+1) {
				t.Fatalf("delivery %d is row %v: not in commit order", i, c.New["item"])
			}
		}
	})

	t.Run("BadDefinitionsAndRemoval", func(t *testing.T) {
		for _, q := range []string{
			`SELECT ` + schema + `.stream_table($1, 'orders:{nope}')`,
			`SELECT ` + schema + `.stream_table($1, 'orders', ARRAY['nope'])`,
			`SELECT ` + schema + `.stream_table($1, '')`,
		} {
			if _, err := conn.Exec(ctx, q, orders); err == nil || !strings.Contains(err.Error(), "herald stream_table") {
				t.Errorf("%s: %v, want a stream_table error", q, err)
			}
		}
		sqlExec(t, conn, `SELECT `+schema+`.unstream_table($1)`, orders)
		var triggers int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal`, orders).Scan(&triggers); err != nil || triggers != 0 {
			t.Fatalf("triggers left after unstream_table: %d (%v)", triggers, err)
		}
		subscribe("orders:6")
		sqlExec(t, conn, `INSERT INTO `+orders+` (customer_id, item) VALUES (6, 'after removal')`)
		if _, err := e.Publish(ctx, "orders:6", &engine.Publication{Data: []byte(`"marker"`)}, withHistory(10)); err != nil {
			t.Fatal(err)
		}
		if got := rec.awaitN(t, "orders:6", 1); string(got[0].pub.Data) != `"marker"` {
			t.Fatalf("a removed stream still published: %s", got[0].pub.Data)
		}
	})
}
