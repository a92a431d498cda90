package auth

import "errors"

// ErrTokenExpired reports a token whose exp claim is in the past. It is only
// returned for tokens that are otherwise valid (signature included).
var ErrTokenExpired = errors.New("token expired")

// ErrInvalidToken reports a token that is malformed, badly signed, signed with
// an algorithm that is not configured, or carries disallowed or wrong claims.
// Returned errors wrap it together with a description of the cause.
var ErrInvalidToken = errors.New("invalid token")

// ErrInvalidCaps reports a caps list (or an allow list) that cannot be
// used: an unknown operation or match kind, a pattern that does not
// compile, or more than the bounds of caps.go. From a token it comes
// wrapped in ErrInvalidToken too.
var ErrInvalidCaps = errors.New("invalid capabilities")
