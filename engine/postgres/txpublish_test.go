package postgres

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
)

// sqlConn is an application's own connection, for publishing from SQL.
func sqlConn(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func sqlExec(t *testing.T, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func TestTransactionalPublish(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	recA, recB := newRecorder(), newRecorder()
	a := startEngine(t, testOptions(dsn, schema), recA)
	b := startEngine(t, testOptions(dsn, schema), recB)
	conn := sqlConn(t, dsn)
	ctx := t.Context()
	pub := `SELECT ` + schema + `.publish($1, $2::jsonb, 100, '1 minute')`

	t.Run("CommitDeliversOnceRollbackNever", func(t *testing.T) {
		ch := "tx:" + randomToken(4)
		for _, e := range []*Engine{a, b} {
			if err := e.Subscribe(ctx, ch); err != nil {
				t.Fatal(err)
			}
		}
		// Rolled back: never delivered, and its offset is not used.
		sqlExec(t, conn, "BEGIN")
		sqlExec(t, conn, pub, ch, `{"n":"rolled back"}`)
		sqlExec(t, conn, "ROLLBACK")
		// Committed.
		sqlExec(t, conn, "BEGIN")
		var off int64
		if err := conn.QueryRow(ctx, pub, ch, `{"n":1}`).Scan(&off); err != nil {
			t.Fatal(err)
		}
		sqlExec(t, conn, "COMMIT")
		if off != 1 {
			t.Errorf("publish() returned offset %d, want 1", off)
		}
		// Subtransactions: the aborted one's publication goes, the
		// released one's stays.
		sqlExec(t, conn, "BEGIN")
		sqlExec(t, conn, "SAVEPOINT s1")
		sqlExec(t, conn, pub, ch, `{"n":"aborted savepoint"}`)
		sqlExec(t, conn, "ROLLBACK TO SAVEPOINT s1")
		sqlExec(t, conn, pub, ch, `{"n":2}`)
		sqlExec(t, conn, "SAVEPOINT s2")
		sqlExec(t, conn, pub, ch, `{"n":3}`)
		sqlExec(t, conn, "RELEASE SAVEPOINT s2")
		sqlExec(t, conn, "COMMIT")
		// A marker published through the engine comes after all of it.
		if _, err := a.Publish(ctx, ch, &engine.Publication{Data: []byte(`{"n":4}`)}, withHistory(100)); err != nil {
			t.Fatal(err)
		}
		_, pos, err := a.History(ctx, ch, engine.HistoryRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for name, rec := range map[string]*recorder{"a": recA, "b": recB} {
			got := rec.awaitN(t, ch, 4)
			checkOffsets(t, name, got, 4, pos.Epoch)
			for i, d := range got {
				want := fmt.Sprintf(`{"n": %d}`, i+1)
				if i == 3 {
					want = `{"n":4}`
				}
				if string(d.pub.Data) != want {
					t.Errorf("node %s: delivery %d is %s, want %s", name, i, d.pub.Data, want)
				}
			}
		}
	})

	t.Run("OrderedWithEnginePublications", func(t *testing.T) {
		const each = 100
		ch := "tx-order:" + randomToken(4)
		if err := b.Subscribe(ctx, ch); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		wg.Go(func() {
			for i := range each {
				if _, err := a.Publish(ctx, ch, &engine.Publication{Data: fmt.Appendf(nil, `"e%d"`, i)}, withHistory(1000)); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() {
			c, err := pgx.Connect(ctx, dsn)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close(context.Background())
			for i := range each {
				if _, err := c.Exec(ctx, pub, ch, fmt.Sprintf(`"s%d"`, i)); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		_, pos, err := b.History(ctx, ch, engine.HistoryRequest{})
		if err != nil {
			t.Fatal(err)
		}
		got := recB.awaitN(t, ch, 2*each)
		checkOffsets(t, "b", got, 2*each, pos.Epoch)
		next := map[byte]int{}
		for _, d := range got {
			var src byte
			var n int
			if _, err := fmt.Sscanf(string(d.pub.Data), `"%c%d"`, &src, &n); err != nil || n != next[src] {
				t.Fatalf("delivery %s out of its publisher's order (want %c%d)", d.pub.Data, src, next[src])
			}
			next[src]++
		}
	})

	t.Run("BytesTagsWithoutHistoryAndSpilled", func(t *testing.T) {
		ch := "tx-bytes:" + randomToken(4)
		if err := b.Subscribe(ctx, ch); err != nil {
			t.Fatal(err)
		}
		small, large := []byte{0, 0xff, 'x'}, payload(20000, true)
		sqlExec(t, conn, `SELECT `+schema+`.publish_bytes($1, $2, tags => '{"k":"v","n":1}')`, ch, small)
		sqlExec(t, conn, `SELECT `+schema+`.publish_bytes($1, $2, 10, '1 minute')`, ch, large)
		sqlExec(t, conn, `SELECT `+schema+`.publish($1, '{"big":"`+string(payload(9000, false))+`"}', 10, '1 minute')`, ch)
		got := recB.awaitN(t, ch, 3)
		if d := got[0]; !bytes.Equal(d.pub.Data, small) || d.sp.Offset != 0 || d.pub.Tags["k"] != "v" || d.pub.Tags["n"] != "1" {
			t.Errorf("small binary publication: data %q offset %d tags %v", d.pub.Data, d.sp.Offset, d.pub.Tags)
		}
		if d := got[1]; !bytes.Equal(d.pub.Data, large) || d.sp.Offset != 1 {
			t.Errorf("large binary publication: %d bytes at offset %d", len(d.pub.Data), d.sp.Offset)
		}
		if d := got[2]; len(d.pub.Data) < 9000 || d.sp.Offset != 2 {
			t.Errorf("large JSON publication: %d bytes at offset %d", len(d.pub.Data), d.sp.Offset)
		}
		pubs, _, err := b.History(ctx, ch, engine.HistoryRequest{Limit: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(pubs) != 2 || !bytes.Equal(pubs[0].Data, large) || !slices.Equal(offsetsOf(pubs), []uint64{1, 2}) {
			t.Errorf("history: %d publications", len(pubs))
		}
	})
}

func withHistory(size int) engine.PublishOptions {
	return engine.PublishOptions{HistorySize: size, HistoryTTL: time.Minute}
}

func offsetsOf(pubs []*engine.Publication) []uint64 {
	out := make([]uint64, len(pubs))
	for i, p := range pubs {
		out[i] = p.Offset
	}
	return out
}
