package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a hub, transport or client goroutine outlives
// the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
