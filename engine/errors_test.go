package engine_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/heraldhq/herald/engine"
)

// TestErrorClasses: every sentinel is in the class the hub answers it by,
// also wrapped with context as the engines return it, and a driver's
// failure is in none.
func TestErrorClasses(t *testing.T) {
	for _, tc := range []struct {
		err                    error
		unsupported, temporary bool
	}{
		{engine.ErrIdempotencyUnsupported, true, false},
		{engine.ErrMapUnsupported, true, false},
		{engine.ErrIdempotencyFull, false, true},
		{engine.ErrClosed, false, false},
		{engine.ErrBadCursor, false, false},
		{errors.New("dial tcp: connection refused"), false, false},
	} {
		err := fmt.Errorf("publish to %q: %w", "ch", tc.err)
		if got := engine.IsUnsupported(err); got != tc.unsupported {
			t.Errorf("IsUnsupported(%v) = %v, want %v", err, got, tc.unsupported)
		}
		if got := engine.IsTemporary(err); got != tc.temporary {
			t.Errorf("IsTemporary(%v) = %v, want %v", err, got, tc.temporary)
		}
	}
}
