package postgres

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// TestMigrateConcurrently starts migrations of one fresh schema from many
// goroutines, each with its own connection, as nodes starting together do.
func TestMigrateConcurrently(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	const nodes = 8
	var wg sync.WaitGroup
	errs := make(chan error, nodes)
	for range nodes {
		wg.Go(func() {
			if err := Migrate(t.Context(), dsn, schema); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Migrate: %v", err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	conn := sqlConn(t, dsn)
	var applied, want int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM `+schema+`.schema_migrations`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	want = len(ms)
	if applied != want {
		t.Fatalf("%d migrations recorded, want %d", applied, want)
	}
	// Once more: nothing to do, no error.
	if err := Migrate(t.Context(), dsn, schema); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
}

// TestPlainSQL applies SQL()'s output by hand and checks that the engine
// then runs on it without migrating.
func TestPlainSQL(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	text, err := SQL(schema)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, schema+".publish(") {
		t.Fatalf("SQL output does not define %s.publish", schema)
	}
	conn := sqlConn(t, dsn)
	if _, err := conn.Exec(t.Context(), text); err != nil {
		t.Fatalf("apply SQL: %v", err)
	}
	opts := testOptions(dsn, schema)
	opts.SkipMigrate = true
	rec := newRecorder()
	e := startEngine(t, opts, rec)
	ch := "plain-sql"
	if err := e.Subscribe(t.Context(), ch); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Publish(t.Context(), ch, &pubData, withHistory(10)); err != nil {
		t.Fatal(err)
	}
	rec.awaitN(t, ch, 1)
	if err := Migrate(t.Context(), dsn, schema); err != nil {
		t.Fatalf("Migrate after the plain SQL: %v", err)
	}
}

func TestSchemaNameChecked(t *testing.T) {
	for _, bad := range []string{"", "Herald", "a-b", "a;drop", "1abc", strings.Repeat("a", 41)} {
		if _, err := SQL(bad); err == nil {
			t.Errorf("SQL(%q) accepted the name", bad)
		}
		if bad == "" {
			continue // New takes "" as the default schema
		}
		if e, err := New(context.Background(), Config{DSN: "postgres://x", Schema: bad}); err == nil {
			_ = e.Close()
			t.Errorf("New accepted schema %q", bad)
		}
	}
}

func TestMigrateConnectError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Migrate(ctx, "postgres://nobody@127.0.0.1:1/none", "herald"); err == nil {
		t.Fatal("Migrate with a cancelled context succeeded")
	}
}
