package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/heraldhq/herald/engine"
)

type opts struct{ name string }

// TestKindOpen: a kind passes its own options and the wiring to its
// constructor, takes nil for the zero options, and refuses another type.
func TestKindOpen(t *testing.T) {
	var got opts
	var wired engine.Wiring
	k := engine.NewKind(engine.KindSpec[opts]{
		Name: "test",
		Open: func(_ context.Context, o opts, w engine.Wiring) (engine.Engine, error) {
			got, wired = o, w
			return nil, nil
		},
	})
	if _, err := k.Open(t.Context(), opts{name: "a"}, engine.Wiring{NodeID: "n1"}); err != nil || got.name != "a" || wired.NodeID != "n1" {
		t.Fatalf("Open: %v, options %+v, wiring %+v", err, got, wired)
	}
	if _, err := k.Open(t.Context(), nil, engine.Wiring{}); err != nil || got != (opts{}) {
		t.Fatalf("Open(nil): %v, options %+v, want the zero options", err, got)
	}
	if _, err := k.Open(t.Context(), "a string", engine.Wiring{}); err == nil || !strings.Contains(err.Error(), "engine test: options of type string") {
		t.Fatalf("Open(string): %v, want the options' type refused", err)
	}
	if k.KeepsPresenceAlone() {
		t.Error("a kind without OpenPresence keeps presence for others")
	}
	if _, err := k.OpenPresence(t.Context(), nil, engine.Wiring{}); err == nil {
		t.Error("OpenPresence of a kind without it succeeded")
	}
}

// TestRegistry: lookups by name, names sorted, and a name listed twice
// refused.
func TestRegistry(t *testing.T) {
	kind := func(name string) engine.Kind { return engine.NewKind(engine.KindSpec[opts]{Name: name}) }
	r := engine.NewRegistry(kind("b"), kind("a"))
	if k, ok := r.Lookup("b"); !ok || k.Name != "b" {
		t.Errorf("Lookup(b) = %q, %v", k.Name, ok)
	}
	if _, ok := r.Lookup("c"); ok {
		t.Error("Lookup(c) found a kind that is not registered")
	}
	if got := strings.Join(r.Names(), ","); got != "a,b" {
		t.Errorf("Names = %s, want a,b", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewRegistry accepted a name listed twice")
		}
	}()
	engine.NewRegistry(kind("a"), kind("a"))
}
