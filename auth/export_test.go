package auth

import "time"

// SetJWKSClock replaces the clock of v's key set, so that tests can pass
// the minimum refresh interval and the maximum age without waiting.
func SetJWKSClock(v *Verifier, now func() time.Time) {
	v.jwks.mu.Lock()
	defer v.jwks.mu.Unlock()
	v.jwks.now = now
}

// SetClock replaces the clock v compares the previous keys' validity and
// its cache entries with. Call it before v is used.
func SetClock(v *Verifier, now func() time.Time) { v.now = now }
