package hub_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any goroutine outlives the tests: every hub,
// transport and client started by a test must be gone after its cleanup.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
