//go:build unix

package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/enginetest"
	"github.com/heraldhq/herald/internal/testenv"
)

// postgresBin finds the directory of the PostgreSQL server programs:
// pg_config's, Debian's /usr/lib/postgresql/*/bin, or the PostgreSQL 18 of
// the test services.
func postgresBin(t *testing.T) string {
	t.Helper()
	var dirs []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	dirs = append(dirs, debian...)
	if d := os.Getenv("HERALD_TEST_POSTGRES18_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	if os.Getenv(testenv.RequireServices) == "1" {
		t.Fatalf("no PostgreSQL server programs (initdb) in %v and %s=1", dirs, testenv.RequireServices)
	}
	t.Skipf("no PostgreSQL server programs (initdb) in %v", dirs)
	return ""
}

// asPostgres makes cmd run as the postgres OS user when the test runs as
// root, since PostgreSQL refuses to run as root; dir and everything in it
// is given to that user.
func asPostgres(t *testing.T, cmd *exec.Cmd, dir string) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		return cmd
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("running as root needs a postgres user: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	err = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	return cmd
}

// startTLSPostgres makes a throwaway PostgreSQL cluster that accepts only
// TLS connections (hostssl), with a server certificate from ca for
// 127.0.0.1 only, and returns its port. The cluster is stopped and removed
// when t ends.
func startTLSPostgres(t *testing.T, ca *testenv.CA) int {
	t.Helper()
	bin := postgresBin(t)
	// Not t.TempDir: its parent is private to the test's user, and the
	// server may run as another.
	root, err := os.MkdirTemp("", "herald-pgtls-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	data := filepath.Join(root, "data")
	pw := filepath.Join(root, "pw")
	if err := os.WriteFile(pw, []byte("herald\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := ca.Server(t, "postgres", "127.0.0.1")
	for _, f := range []struct{ from, to string }{{srv.CertFile, "server.crt"}, {srv.KeyFile, "server.key"}} {
		b, err := os.ReadFile(f.from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f.to), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	initdb := asPostgres(t, exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "herald", "--pwfile="+pw,
		"--auth-host=scram-sha-256", "--auth-local=scram-sha-256", "--encoding=UTF8", "--locale=C"), root)
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	// Only TLS connections: one that is not is refused, so a test that
	// connects has used TLS.
	hba := "hostssl all all 127.0.0.1/32 scram-sha-256\n"
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	cmd := asPostgres(t, exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=40",
		"-c", "fsync=off", "-c", "ssl=on",
		"-c", "ssl_cert_file="+filepath.Join(root, "server.crt"), "-c", "ssl_key_file="+filepath.Join(root, "server.key")), root)
	testenv.StartProcess(t, cmd).WaitListening(t, port, 30*time.Second)
	return port
}

// TestTLSVerifyFull runs the engine on a PostgreSQL that accepts only TLS,
// with sslmode=verify-full and the CA in sslrootcert, as docs/postgres.md
// tells: the connections are encrypted and publications are kept. A
// server certificate from another CA, or for another host name than the
// one dialled, is refused with the TLS error, and so is a connection
// without TLS.
func TestTLSVerifyFull(t *testing.T) {
	ca := testenv.NewCA(t)
	port := startTLSPostgres(t, ca)
	dsn := func(host, mode, rootcert string) string {
		return fmt.Sprintf("postgres://herald:herald@%s:%d/postgres?sslmode=%s&sslrootcert=%s&connect_timeout=10", host, port, mode, rootcert)
	}
	good := dsn("127.0.0.1", "verify-full", ca.File)

	// The server has just started listening; it may still be finishing
	// its startup, which refuses connections with a distinct error.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var conn *pgx.Conn
	testenv.Eventually(t, "the TLS cluster to accept connections", 30*time.Second, func() bool {
		var err error
		conn, err = pgx.Connect(ctx, good)
		return err == nil
	})
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

	for _, c := range []struct{ name, dsn, want string }{
		{"another CA", dsn("127.0.0.1", "verify-full", testenv.NewCA(t).File), "certificate signed by unknown authority"},
		{"another host name", dsn("localhost", "verify-full", ca.File), "x509: certificate is not valid for any names, but wanted to match localhost"},
		{"no TLS", dsn("127.0.0.1", "disable", ca.File), "no encryption"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			e, err := New(ctx, Config{DSN: c.dsn, Schema: "herald_tls", Logger: testenv.Logger()})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			err = e.Start(ctx, enginetest.NewRecorder())
			if err == nil {
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}
