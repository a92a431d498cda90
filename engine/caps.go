package engine

// MapsOf is the one answer to "does this engine keep maps": the map part
// of e (e itself, or the engine e wraps, as the tracing wrapper does), or
// nil and false when e keeps no map state. The hub, the sharded engine and
// enginetest.CheckKind ask here; configuration checks, made before any
// engine exists, ask the kind's Caps.Maps, which CheckKind holds equal to
// this answer for every registered kind.
func MapsOf(e Engine) (MapBroker, bool) { return capOf[MapBroker](e) }

// StoreOf returns the Store of e (e itself, or the engine a wrapper
// wraps), or nil and false when e keeps no state between nodes. Kinds
// declare the same answer as Caps.Store.
func StoreOf(e Engine) (Store, bool) { return capOf[Store](e) }

// capOf finds the part of e that implements T, looking through wrappers.
func capOf[T any](e Engine) (T, bool) {
	for range 8 { // wrappers do not nest deeper
		if c, ok := e.(T); ok {
			return c, true
		}
		u, ok := e.(interface{ Unwrap() Engine })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	var zero T
	return zero, false
}
