package protocol_test

import (
	"testing"

	"github.com/heraldhq/herald/internal/test/protogen"
)

// TestGeneratedCodeIsCurrent: the committed Go code is what generate.go's
// go:generate line makes of the committed .proto file (see
// protogen.Current for the tools it needs, and when it skips).
func TestGeneratedCodeIsCurrent(t *testing.T) {
	protogen.Current(t)
}
