package tlsconf

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a connection goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
