package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
)

// TestTransactionalMapPublish checks map_publish and map_remove called from
// an application's transaction: delivered to every node, with the key,
// if and only if the transaction commits, and in the state read after.
func TestTransactionalMapPublish(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	recA, recB := newRecorder(), newRecorder()
	a := startEngine(t, testOptions(dsn, schema), recA)
	b := startEngine(t, testOptions(dsn, schema), recB)
	conn := sqlConn(t, dsn)
	ctx := t.Context()
	ch := "txmap:" + randomToken(4)
	for _, e := range []*Engine{a, b} {
		if err := e.Subscribe(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	set := `SELECT ` + schema + `.map_publish($1, $2, $3::jsonb)`
	remove := `SELECT ` + schema + `.map_remove($1, $2)`

	sqlExec(t, conn, "BEGIN")
	sqlExec(t, conn, set, ch, "rolled", `{"n":"rolled back"}`)
	sqlExec(t, conn, "ROLLBACK")

	sqlExec(t, conn, "BEGIN")
	sqlExec(t, conn, set, ch, "a", `{"n":1}`)
	sqlExec(t, conn, set, ch, "b", `{"n":2}`)
	sqlExec(t, conn, remove, ch, "a")
	sqlExec(t, conn, "COMMIT")

	for name, rec := range map[string]*recorder{"a": recA, "b": recB} {
		got := rec.awaitN(t, ch, 3)
		want := []struct {
			key     string
			removed bool
			data    string
		}{{"a", false, `{"n": 1}`}, {"b", false, `{"n": 2}`}, {"a", true, ""}}
		for i, w := range want {
			p := got[i].pub
			if p.Key != w.key || p.Removed != w.removed || string(p.Data) != w.data || got[i].sp.Offset != uint64(i+1) {
				t.Errorf("node %s: change %d is %q removed=%v %s at %d, want %q removed=%v %s at %d",
					name, i, p.Key, p.Removed, p.Data, got[i].sp.Offset, w.key, w.removed, w.data, i+1)
			}
		}
	}
	page, err := a.MapState(ctx, ch, engine.MapStateRequest{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 1 || page.Entries[0].Key != "b" || string(page.Entries[0].Data) != `{"n": 2}` || page.Position.Offset != 3 {
		t.Fatalf("state after the transaction: %d entries at %+v", len(page.Entries), page.Position)
	}
	pubs, _, err := b.History(ctx, ch, engine.HistoryRequest{Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(pubs) != 3 || pubs[2].Key != "a" || !pubs[2].Removed {
		t.Fatalf("stream after the transaction: %d changes", len(pubs))
	}
}

// TestMapTable checks herald.map_table: the table's rows are the map's
// state, and a subscriber that pages through the state while writers
// change the table (some transactions rolled back), then applies the
// change stream from the first page's position, ends with exactly the
// table's rows, each key once.
func TestMapTable(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	rec := newRecorder()
	e := startEngine(t, testOptions(dsn, schema), rec)
	conn := sqlConn(t, dsn)
	ctx := t.Context()
	tbl := schema + ".items"
	sqlExec(t, conn, `CREATE TABLE `+tbl+` (id int PRIMARY KEY, board int NOT NULL, title text, secret text)`)
	sqlExec(t, conn, `INSERT INTO `+tbl+` SELECT i, 1 + i % 2, 'item ' || i, 'x' FROM generate_series(1, 400) i`)
	var copied int64
	if err := conn.QueryRow(ctx, `SELECT `+schema+`.map_table($1, 'mt:{board}', 'id', ARRAY['id','title'])`, tbl).Scan(&copied); err != nil {
		t.Fatal(err)
	}
	if copied != 400 {
		t.Fatalf("map_table copied %d rows, want 400", copied)
	}
	ch := "mt:1"

	// Writers on their own connection while the subscriber reads.
	done := make(chan error, 1)
	go func() {
		w, err := pgx.Connect(ctx, dsn)
		if err != nil {
			done <- err
			return
		}
		defer w.Close(context.Background())
		for i := 0; i < 150; i++ {
			stmts := []string{
				fmt.Sprintf(`UPDATE %s SET title = 'changed %d' WHERE id = %d`, tbl, i, 2+2*(i%200)),
				fmt.Sprintf(`INSERT INTO %s VALUES (%d, 1, 'new %d', 'x')`, tbl, 1000+2*i, i),
				fmt.Sprintf(`DELETE FROM %s WHERE id = %d`, tbl, 398-2*(i%150)),
				fmt.Sprintf(`UPDATE %s SET board = 2 WHERE id = %d`, tbl, 1000+2*i-2), // moves a key to mt:2
			}
			end := "COMMIT"
			if i%7 == 0 {
				end = "ROLLBACK"
			}
			if _, err := w.Exec(ctx, "BEGIN; "+stmts[i%4]+"; "+end); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()

	state := map[string]string{}
	var first engine.StreamPosition
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := e.MapState(ctx, ch, engine.MapStateRequest{Cursor: cursor, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if pages == 0 {
			first = page.Position
		}
		for _, p := range page.Entries {
			if _, dup := state[p.Key]; dup {
				t.Fatalf("key %s on two pages", p.Key)
			}
			state[p.Key] = string(p.Data)
		}
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	pubs, top, err := e.History(ctx, ch, engine.HistoryRequest{Since: &first, Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	if top.Epoch != first.Epoch || (len(pubs) > 0 && pubs[0].Offset != first.Offset+1) {
		t.Fatalf("stream after %+v does not follow on: %d changes, top %+v", first, len(pubs), top)
	}
	for _, p := range pubs {
		if p.Removed {
			delete(state, p.Key)
		} else {
			state[p.Key] = string(p.Data)
		}
	}
	rows, err := conn.Query(ctx, `SELECT id::text, jsonb_build_object('id', id, 'title', title)::text FROM `+tbl+` WHERE board = 1`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(state) != len(want) {
		t.Fatalf("snapshot plus stream holds %d keys, the table %d rows", len(state), len(want))
	}
	for k, v := range want {
		if state[k] != v {
			t.Fatalf("key %s: %q, the table has %q", k, state[k], v)
		}
	}
}
