package redis

import (
	"testing"

	"github.com/heraldhq/herald/engine/enginetest"
)

// TestKind: the registry's view of the engine matches the engine, and the
// defaults the configuration file documents are the engine's.
func TestKind(t *testing.T) {
	enginetest.CheckKind(t, Kind(), (*Engine)(nil))
	given := Config{Addrs: []string{"127.0.0.1:6379"}}
	got, err := given.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.CheckDefaultTags(t, given, got)
}
