package testenv_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/test/testenv"
)

const variable = "HERALD_TEST_TESTENV_PROBE"

// stopTB records how Require stopped a test. Skipf and Fatalf end the
// calling goroutine, as testing.T's do.
type stopTB struct {
	testing.TB
	skipped, fatal string
}

func (s *stopTB) Skipf(format string, args ...any) {
	s.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (s *stopTB) Fatalf(format string, args ...any) {
	s.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// require runs testenv.Require in a goroutine of its own, so that the
// stop ends that goroutine and not the test.
func require(t *testing.T) (value string, tb *stopTB) {
	tb = &stopTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		value = testenv.Require(tb, variable)
	}()
	<-done
	return value, tb
}

func TestRequireSet(t *testing.T) {
	t.Setenv(variable, "127.0.0.1:1")
	t.Setenv(testenv.RequireServices, "1")
	if v, tb := require(t); v != "127.0.0.1:1" || tb.skipped != "" || tb.fatal != "" {
		t.Errorf("Require = %q, skipped %q, fatal %q", v, tb.skipped, tb.fatal)
	}
}

// TestRequireUnset checks that a missing variable stops the test with a
// message naming it: a skip, or a failure when services are required.
func TestRequireUnset(t *testing.T) {
	for _, required := range []string{"", "1"} {
		t.Setenv(variable, "")
		t.Setenv(testenv.RequireServices, required)
		_, tb := require(t)
		stop, other := tb.skipped, tb.fatal
		if required == "1" {
			stop, other = tb.fatal, tb.skipped
		}
		if other != "" || !strings.Contains(stop, variable) {
			t.Errorf("%s=%q: skipped %q, fatal %q", testenv.RequireServices, required, tb.skipped, tb.fatal)
		}
	}
}

func TestLoggerLevel(t *testing.T) {
	t.Setenv("HERALD_TEST_LOG", "")
	ctx := context.Background()
	if l := testenv.Logger(); l.Enabled(ctx, slog.LevelWarn) || !l.Enabled(ctx, slog.LevelError) {
		t.Error("default logger: want errors only")
	}
	t.Setenv("HERALD_TEST_LOG", "debug")
	if !testenv.Logger().Enabled(ctx, slog.LevelDebug) {
		t.Error("HERALD_TEST_LOG=debug: debug is off")
	}
}
