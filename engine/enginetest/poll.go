package enginetest

import (
	"testing"
	"time"
)

// eventually polls cond until it holds or timeout passes. This package is
// imported by engines outside the module's tests, so it cannot use the
// module's internal test helpers (internal/test/testenv has the same).
func eventually(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond) // what is awaited is in another process or database: nothing to wait on
	}
}
