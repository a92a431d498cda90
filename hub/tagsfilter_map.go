package hub

import (
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub/internal/tagsfilter"
)

// passesFilter reports whether pub reaches a subscriber whose tags filter
// is f (nil: every publication does). m, when not nil, shares the results
// of filters several subscribers hold (one Memo per publication).
//
// A map key's removal carries no tags unless its remover gave some (the
// API's map_remove 'tags'): the engines keep no tags of the removed value
// to copy onto it. Such a removal passes every filter, so that a filtered
// subscriber holding the key drops it; one that never held the key
// removes nothing. A removal with tags is filtered as any publication.
func passesFilter(f *tagsfilter.Filter, m *tagsfilter.Memo, pub *engine.Publication) bool {
	switch {
	case f == nil, pub.Removed && len(pub.Tags) == 0:
		return true
	case m != nil:
		return m.Passes(f, pub.Tags)
	}
	return f.Match(pub.Tags)
}
