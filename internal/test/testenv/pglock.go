//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || windows

package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PostgresLockFile is the name, under os.TempDir(), of the file whose
// lock LockPostgres takes.
const PostgresLockFile = "herald-test-postgres.lock"

const (
	// lockPoll is how often a waiting test retries the lock.
	lockPoll = 25 * time.Millisecond
	// lockMaxWait bounds the wait when the test has no deadline (a
	// benchmark, or -timeout 0).
	lockMaxWait = 30 * time.Minute
	// lockDeadlineMargin leaves the test time to fail with a message
	// naming the holder before the test binary's own timeout kills it.
	lockDeadlineMargin = 10 * time.Second
	// lockQuiet is how long a test waits before it logs who holds the lock.
	lockQuiet = 2 * time.Second
)

// LockPostgres makes t the only test, across every process of the
// machine, that uses the test PostgreSQL server until t ends.
//
// `go test ./...` runs the test binaries of different packages at the same
// time, and some PostgreSQL tests restart the server
// (HERALD_TEST_POSTGRES_RESTART) or terminate backends, which would break
// PostgreSQL tests running in another package. So every test that uses
// PostgreSQL calls LockPostgres first; tests of other services never do,
// so they keep running in parallel.
//
// The lock is an exclusive flock(2) (LockFileEx on Windows) on
// PostgresLockFile under os.TempDir(), taken when LockPostgres returns and released in
// t.Cleanup, so the kernel releases it too if the test process dies. The
// holder writes its process id and test name into the file, and a test
// that has waited a while logs them. The wait is bounded by the test's
// deadline (less a margin), or 30 minutes without one; after it, or when
// the lock file cannot be opened, the test fails. A test, or a subtest of
// one, that already holds the lock and asks again fails at once instead of
// waiting for itself: take the lock once, in the test (or the helper)
// that first touches PostgreSQL.
//
// Tests in one package that call t.Parallel are serialised by it as well.
func LockPostgres(t testing.TB) {
	t.Helper()
	path := filepath.Join(os.TempDir(), PostgresLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if errors.Is(err, os.ErrPermission) {
		// Another user's file: flock works on a read-only descriptor too,
		// only the holder's name is not written.
		f, err = os.Open(path)
	}
	if err != nil {
		t.Fatalf("PostgreSQL test lock: %v", err)
	}
	start := time.Now()
	deadline := lockDeadline(t, start)
	logged := false
	for {
		locked, err := tryLockFile(f)
		if err != nil {
			_ = f.Close()
			t.Fatalf("PostgreSQL test lock %s: %v", path, err)
		}
		if locked {
			break
		}
		pid, holder := lockHolder(path)
		if pid == os.Getpid() && (holder == t.Name() || strings.HasPrefix(t.Name(), holder+"/")) {
			_ = f.Close()
			t.Fatalf("PostgreSQL test lock: %s already holds it; call LockPostgres once per test", holder)
		}
		if time.Now().After(deadline) {
			_ = f.Close()
			t.Fatalf("PostgreSQL test lock %s: still held by pid %d (%s) after %v",
				path, pid, holder, time.Since(start).Round(time.Second))
		}
		if !logged && time.Since(start) > lockQuiet {
			t.Logf("waiting for the PostgreSQL test lock %s, held by pid %d (%s)", path, pid, holder)
			logged = true
		}
		time.Sleep(lockPoll)
	}
	// Only the holder writes, so the file names the current holder.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\t"+t.Name()+"\n"), 0)
	}
	if waited := time.Since(start); waited > lockQuiet {
		t.Logf("took the PostgreSQL test lock after %v", waited.Round(time.Millisecond))
	}
	t.Cleanup(func() {
		_ = f.Truncate(0)
		if err := unlockFile(f); err != nil {
			t.Errorf("release the PostgreSQL test lock: %v", err)
		}
		_ = f.Close()
	})
}

// lockDeadline is when a test waiting for the lock gives up.
func lockDeadline(t testing.TB, start time.Time) time.Time {
	limit := start.Add(lockMaxWait)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if at, ok := d.Deadline(); ok && at.Add(-lockDeadlineMargin).Before(limit) {
			return at.Add(-lockDeadlineMargin)
		}
	}
	return limit
}

// lockHolder reads the process id and test name the holder wrote; both
// are zero while the holder has not written them yet.
func lockHolder(path string) (pid int, test string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, ""
	}
	p, name, ok := strings.Cut(strings.TrimSuffix(string(b), "\n"), "\t")
	if !ok {
		return 0, ""
	}
	pid, _ = strconv.Atoi(p)
	return pid, name
}
