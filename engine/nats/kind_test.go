package nats

import (
	"testing"

	"github.com/heraldhq/herald/engine/enginetest"
)

// TestKind: the registry's view of the engine matches the engine, and the
// defaults the configuration file documents are the engine's (the URL,
// which the engine requires, aside).
func TestKind(t *testing.T) {
	enginetest.CheckKind(t, Kind(), (*Engine)(nil))
	given := Config{URL: "nats://127.0.0.1:4222"}
	got, err := given.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.CheckDefaultTags(t, given, got)
}
