package stateoutput_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, testenv.ProcessGoroutines()...)
}
