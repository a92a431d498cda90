package postgres

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testDSN returns the test database, skipping the test when there is none
// unless the run requires services (scripts/test.sh sets that). It holds
// the machine-wide PostgreSQL test lock until t ends, since the fault tests
// restart the server and kill backends under tests of other packages: call
// it once per test, before anything touches PostgreSQL.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := testenv.Require(t, "HERALD_TEST_POSTGRES_DSN")
	testenv.LockPostgres(t)
	return dsn
}

// testSchema returns a schema name no other test uses and drops the schema
// when t ends, so tests can share one database.
func testSchema(t testing.TB, dsn string) string {
	t.Helper()
	schema := "herald_t_" + randomToken(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// testOptions are quick to notice expiry and failures, so tests stay short.
func testOptions(dsn, schema string) Config {
	// With HERALD_TEST_POSTGRES_POOLER_DSN (a transaction-mode pooler in
	// front of the same database), the publishing and query pools go
	// through the pooler and only the listening connection is direct, as
	// docs/postgres.md tells deployments behind PgBouncer to do. Tests
	// that make databases or paths of their own (failover, black holes)
	// keep their DSN.
	listen := ""
	if pooler := os.Getenv("HERALD_TEST_POSTGRES_POOLER_DSN"); pooler != "" && dsn == os.Getenv("HERALD_TEST_POSTGRES_DSN") {
		dsn, listen = pooler, dsn
	}
	return Config{
		DSN:                 dsn,
		ListenDSN:           listen,
		Schema:              schema,
		JanitorInterval:     50 * time.Millisecond,
		StreamSweepInterval: 200 * time.Millisecond,
		ListenerPing:        time.Second,
		ReconnectMin:        20 * time.Millisecond,
		ReconnectMax:        500 * time.Millisecond,
		Logger:              testLogger(),
	}
}

// testLogger shows errors only, unless HERALD_TEST_LOG=debug asks for
// everything: the fault tests make the engine warn by design.
func testLogger() *slog.Logger {
	level := slog.LevelError
	if os.Getenv("HERALD_TEST_LOG") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// newEngine returns an engine that is not started.
func newEngine(t testing.TB, opts Config) *Engine {
	t.Helper()
	e, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

// startEngine returns a started engine that is closed when t ends.
func startEngine(t testing.TB, opts Config, h engine.Handler) *Engine {
	t.Helper()
	e := newEngine(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Start(ctx, h); err != nil {
		_ = e.Close()
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil && !errors.Is(err, engine.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// TestConformance runs the shared engine suite. The Reconnect test's fault
// terminates the subscribing node's listening backend.
func TestConformance(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	enginetest.Run(t, func(t *testing.T) engine.Engine {
		return newEngine(t, testOptions(dsn, schema))
	}, enginetest.Capabilities{
		History: true, Presence: true, Cluster: true, Idempotency: true, Maps: true, Store: true, ChannelStates: true,
		Faulty: func(t *testing.T) (engine.Engine, engine.Engine, func()) {
			a, b := newEngine(t, testOptions(dsn, schema)), newEngine(t, testOptions(dsn, schema))
			return a, b, func() { terminateListener(t, dsn, b) }
		},
	})
}
