package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/internal/test/testenv"
)

// logicalCluster starts a private PostgreSQL cluster with wal_level =
// logical on a free port and returns its DSN (a superuser, so with the
// REPLICATION attribute). The shared test servers run with wal_level =
// replica and are not restarted for this. It skips the test only when no
// PostgreSQL server binaries exist, and fails instead when
// HERALD_TEST_REQUIRE_SERVICES=1.
func logicalCluster(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(pgBin(), "initdb")); err != nil {
		if os.Getenv(testenv.RequireServices) == "1" {
			t.Fatalf("no PostgreSQL server programs in %s (%s moves it), and %s=1: %v", pgBin(), pgBinVar, testenv.RequireServices, err)
		}
		t.Skipf("no PostgreSQL server programs in %s (set %s to their directory): the logical replication tests need a private cluster", pgBin(), pgBinVar)
	}
	dir := failoverDir(t)
	data := filepath.Join(dir, "data")
	pgTool(t, "initdb", "-D", data, "-U", "herald", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	port := freePort(t)
	appendConf(t, data, fmt.Sprintf(`
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = ''
max_connections = 60
fsync = off
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
`, port))
	pgTool(t, "pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start")
	t.Cleanup(func() { pgTool(t, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop") })
	return fmt.Sprintf("postgres://herald@127.0.0.1:%d/postgres?sslmode=disable", port)
}

// awaitSlotActive waits until a node consumes the slot: a walsender holds
// it. The backend that creates the slot (pg_create_logical_replication_slot
// on the node's lock connection) holds it too, for a moment, before the
// replication connection starts streaming; a wait for "active" alone could
// return in that moment and find the slot released a query later.
func awaitSlotActive(t *testing.T, conn *pgx.Conn, slot string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var active bool
		err := conn.QueryRow(t.Context(), `SELECT coalesce((SELECT a.backend_type = 'walsender' FROM pg_replication_slots s
			JOIN pg_stat_activity a ON a.pid = s.active_pid WHERE s.slot_name = $1), false)`, slot).Scan(&active)
		if err != nil {
			t.Fatal(err)
		}
		if active {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot %s: no node consumes it after 30s", slot)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// closeEngine closes e, for tests that stop a node in the middle.
func closeEngine(t *testing.T, e *Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Close did not return in 30s")
	}
}
