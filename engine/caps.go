package engine

// MapsOf is the one answer to "does this engine keep maps": the map part
// of e (e itself, or the engine e wraps, as the tracing wrapper does), or
// nil and false when e keeps no map state. The hub, the sharded engine and
// enginetest.CheckKind ask here; configuration checks, made before any
// engine exists, ask the kind's Caps.Maps, which CheckKind holds equal to
// this answer for every registered kind.
func MapsOf(e Engine) (MapBroker, bool) {
	for range 8 { // wrappers do not nest deeper
		if mb, ok := e.(MapBroker); ok {
			return mb, true
		}
		u, ok := e.(interface{ Unwrap() Engine })
		if !ok {
			return nil, false
		}
		e = u.Unwrap()
	}
	return nil, false
}
