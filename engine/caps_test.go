package engine_test

import (
	"testing"

	"github.com/heraldhq/herald/engine"
)

type plainEngine struct{ engine.Engine }

type mapEngine struct {
	engine.Engine
	engine.MapBroker
}

type wrapper struct{ engine.Engine }

func (w wrapper) Unwrap() engine.Engine { return w.Engine }

// TestMapsOf: an engine keeps maps when it, or the engine it wraps, is a
// MapBroker; the answer is that MapBroker.
func TestMapsOf(t *testing.T) {
	m := mapEngine{}
	for _, tc := range []struct {
		name string
		e    engine.Engine
		want bool
	}{
		{"plain", plainEngine{}, false},
		{"maps", m, true},
		{"wrapped maps", wrapper{wrapper{m}}, true},
		{"wrapped plain", wrapper{plainEngine{}}, false},
	} {
		mb, ok := engine.MapsOf(tc.e)
		if ok != tc.want || (mb != nil) != tc.want {
			t.Errorf("%s: MapsOf = %v, %v; want keeps maps %v", tc.name, mb, ok, tc.want)
		}
	}
}
