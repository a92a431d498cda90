package enginetest

import (
	"context"
	"errors"
	"testing"

	"github.com/heraldhq/herald/engine"
)

// NewEngine makes an engine for an engine's own tests by calling
// newEngine with a context bounded by the suite's call timeout, fails the
// test if that fails, and closes the engine when t ends. A Close that
// returns engine.ErrClosed, after the test closed the engine itself, is
// no failure.
func NewEngine[E engine.Broker](t testing.TB, newEngine func(ctx context.Context) (E, error)) E {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	e, err := newEngine(ctx)
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil && !errors.Is(err, engine.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// StartEngine starts e delivering to h, within the suite's call timeout,
// and fails the test if it cannot.
func StartEngine(t testing.TB, e engine.Broker, h engine.Handler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := e.Start(ctx, h); err != nil {
		t.Fatalf("Start: %v", err)
	}
}
