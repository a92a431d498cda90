package postgres

import (
	"testing"

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
