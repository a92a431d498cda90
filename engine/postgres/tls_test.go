package postgres

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// startTLSPostgres makes and starts a throwaway cluster, with the server
// programs of HERALD_TEST_POSTGRES_BIN as the failover test does, that
// accepts only TLS connections (hostssl) and presents a certificate from
// ca for 127.0.0.1 only. It is stopped and removed when t ends.
func startTLSPostgres(t *testing.T, ca *testcerts.CA) *pgCluster {
	t.Helper()
	if _, err := os.Stat(filepath.Join(pgBin(), "initdb")); err != nil {
		if os.Getenv(testenv.RequireServices) == "1" {
			t.Fatalf("PostgreSQL server programs (%s): %v", pgBinVar, err)
		}
		t.Skipf("PostgreSQL server programs are not installed (%s): %v", pgBinVar, err)
	}
	dir := failoverDir(t)
	c := &pgCluster{dir: filepath.Join(dir, "tls"), port: freePort(t)}
	pgTool(t, "initdb", "-D", c.dir, "-U", "herald", "--auth=trust", "--encoding=UTF8", "--locale=C")
	srv := ca.ServerFor("postgres", "127.0.0.1")
	crt, key := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	copyForServer(t, srv.CertFile, crt)
	copyForServer(t, srv.KeyFile, key)
	appendConf(t, c.dir, fmt.Sprintf(`
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 40
fsync = off
ssl = on
ssl_cert_file = '%s'
ssl_key_file = '%s'
`, crt, key))
	// Only TLS connections: one that is not is refused, so a test that
	// connects has used TLS.
	hba := filepath.Join(c.dir, "pg_hba.conf")
	if err := os.WriteFile(hba, []byte("hostssl all all 127.0.0.1/32 trust\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.start(t)
	return c
}

// copyForServer copies a file where the server can read it: owned by the
// postgres user when the test runs as root (the server checks that its key
// file is its own, mode 0600).
func copyForServer(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(to, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTLSVerifyFull runs the engine on a PostgreSQL that accepts only TLS,
// with sslmode=verify-full and the CA in sslrootcert, as docs/postgres.md
// tells: the connections are encrypted and publications are delivered and
// kept. A server certificate from another CA, or for another host name
// than the one dialled, is refused with the TLS error, and so is a
// connection without TLS.
func TestTLSVerifyFull(t *testing.T) {
	ca := testcerts.NewCA(t, "herald-test")
	c := startTLSPostgres(t, ca)
	dsn := func(host, mode, rootcert string) string {
		return fmt.Sprintf("postgres://herald@%s:%d/postgres?sslmode=%s&sslrootcert=%s&connect_timeout=10", host, c.port, mode, rootcert)
	}
	good := dsn("127.0.0.1", "verify-full", ca.File)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	var ssl bool
	if err := conn.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil || !ssl {
		t.Fatalf("pg_stat_ssl.ssl = %v, %v; want a TLS connection", ssl, err)
	}
	_ = conn.Close(ctx)

	opts := Config{DSN: good, Schema: "herald_tls", Logger: testenv.Logger()}
	e := enginetest.NewEngine(t, func(ctx context.Context) (*Engine, error) { return New(ctx, opts) })
	rec := enginetest.NewRecorder()
	enginetest.StartEngine(t, e, rec)
	if err := e.Subscribe(ctx, "news"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Publish(ctx, "news", &engine.Publication{Data: []byte(`"over TLS"`)}, engine.PublishOptions{HistorySize: 5, HistoryTTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	rec.WaitForPublications(t, "news", 1, 10*time.Second)
	pubs, _, err := e.History(ctx, "news", engine.HistoryRequest{Limit: -1})
	if err != nil || len(pubs) != 1 {
		t.Fatalf("history over TLS: %v, %v", pubs, err)
	}

	for _, tc := range []struct{ name, dsn, want string }{
		{"another CA", dsn("127.0.0.1", "verify-full", testcerts.NewCA(t, "herald-test").File), "x509: certificate signed by unknown authority"},
		{"another host name", dsn("localhost", "verify-full", ca.File), "x509: certificate is not valid for any names, but wanted to match localhost"},
		{"no TLS", dsn("127.0.0.1", "disable", ca.File), "no encryption"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			e, err := New(ctx, Config{DSN: tc.dsn, Schema: "herald_tls", Logger: testenv.Logger()})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			err = e.Start(ctx, enginetest.NewRecorder())
			if err == nil {
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}
