//go:build race

package hub_test

// raceEnabled: the race detector changes what allocates (sync.Pool drops
// a share of what it is given), so allocation counts are not checked.
const raceEnabled = true
