package proxy_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a goroutine outlives the tests: hubs, backends
// and the routers' keep-alive connections are all closed by cleanups.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
