package tracing_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any goroutine outlives the tests: an exporter
// that is shut down must leave nothing behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
