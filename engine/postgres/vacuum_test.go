package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestVacuumPrivilegeCheck: the janitor asks whether its role may vacuum
// the history table before vacuuming, because a VACUUM it may not do is
// only a warning and no work (on PostgreSQL 15 and 18 alike), so the
// engine used to keep running VACUUMs that did nothing. The owner may; a
// role that can read the table but does not own it may not.
func TestVacuumPrivilegeCheck(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	e := startEngine(t, testOptions(dsn, schema), newRecorder())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	may := func(tx pgx.Tx) bool {
		t.Helper()
		var dead, live int64
		var ok bool
		if err := tx.QueryRow(ctx, e.sql.historyDead).Scan(&dead, &live, &ok); err != nil {
			t.Fatalf("history statistics: %v", err)
		}
		return ok
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if !may(tx) {
		t.Fatal("the engine's own role (the owner) may not vacuum the history table")
	}
	role := "herald_novac_" + randomToken(6)
	if _, err := tx.Exec(ctx, "CREATE ROLE "+role+" NOLOGIN"); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" {
			t.Skipf("the test role may not create roles: %v", err)
		}
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
		"GRANT SELECT ON " + schema + ".history TO " + role,
		"SET LOCAL ROLE " + role,
	} {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if may(tx) {
		t.Fatal("a role that does not own the history table may vacuum it, says the check")
	}
	// The role is created inside the rolled-back transaction: nothing to drop.
}
