package memory

import (
	"testing"

	"github.com/heraldhq/herald/engine/enginetest"
)

// TestKind: the registry's view of the engine matches the engine.
func TestKind(t *testing.T) {
	enginetest.CheckKind(t, Kind(), (*Engine)(nil))
}
