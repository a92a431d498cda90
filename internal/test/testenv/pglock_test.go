package testenv_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/test/testenv"
)

// lockTB is a test of its own name for LockPostgres: it keeps the cleanups
// for the caller to run, and a Fatalf ends only the goroutine that calls
// it, as testing.T's does.
type lockTB struct {
	testing.TB
	name     string
	cleanups []func()
	fatal    string
}

func (l *lockTB) Name() string        { return l.name }
func (l *lockTB) Cleanup(f func())    { l.cleanups = append(l.cleanups, f) }
func (l *lockTB) Logf(string, ...any) {}

func (l *lockTB) Fatalf(format string, args ...any) {
	l.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (l *lockTB) release() {
	for i := len(l.cleanups) - 1; i >= 0; i-- {
		l.cleanups[i]()
	}
	l.cleanups = nil
}

// lock calls LockPostgres for tb in a goroutine and closes the returned
// channel when it returns or fails.
func lock(tb *lockTB) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		testenv.LockPostgres(tb)
	}()
	return done
}

// TestLockPostgresExcludes checks that a second holder waits until the
// first one's cleanup runs, and that the file then names the new holder.
func TestLockPostgresExcludes(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a := &lockTB{TB: t, name: "TestA"}
	<-lock(a)
	if a.fatal != "" {
		t.Fatal(a.fatal)
	}
	b := &lockTB{TB: t, name: "TestB"}
	gotB := lock(b)
	// The negative needs a wait: B must still be waiting after a while.
	select {
	case <-gotB:
		t.Fatalf("second holder got the lock while the first held it (fatal %q)", b.fatal)
	case <-time.After(300 * time.Millisecond):
	}
	a.release()
	select {
	case <-gotB:
	case <-time.After(5 * time.Second):
		t.Fatal("second holder did not get the lock after the first released it")
	}
	defer b.release()
	if b.fatal != "" {
		t.Fatal(b.fatal)
	}
	content, err := os.ReadFile(filepath.Join(os.TempDir(), testenv.PostgresLockFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d\tTestB\n", os.Getpid()); string(content) != want {
		t.Errorf("lock file holds %q, want %q", content, want)
	}
}

// TestLockPostgresNested checks that a test asking again for a lock it (or
// its parent) holds fails at once instead of waiting for itself.
func TestLockPostgresNested(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	parent := &lockTB{TB: t, name: "TestParent"}
	<-lock(parent)
	defer parent.release()
	for _, name := range []string{"TestParent", "TestParent/sub"} {
		again := &lockTB{TB: t, name: name}
		select {
		case <-lock(again):
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: LockPostgres waited for its own lock", name)
		}
		if !strings.Contains(again.fatal, "already holds it") {
			t.Errorf("%s: fatal %q, want a message that the test already holds the lock", name, again.fatal)
		}
	}
}
