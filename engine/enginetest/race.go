//go:build race

package enginetest

// MapExpiryScale is how many keys the map expiry tests expire together:
// under the race detector, delivering 30,000 removals to the test's
// handler alone took 13 s on the shared test machine, which says nothing
// about the engine's expiry, so there they expire 3,000.
const MapExpiryScale = 3000
