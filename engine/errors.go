package engine

import "errors"

// The engine's errors are sentinels (ErrClosed, ErrIdempotencyUnsupported,
// ErrIdempotencyFull, ErrMapUnsupported, ErrBadCursor), wrapped with
// context by the engines, plus whatever a driver returns. The predicates
// below classify them, so that the layers above (the hub, which answers
// with protocol codes, and through it the API) ask what kind of failure
// an error is rather than list the sentinels that make that kind: a new
// sentinel joins a class here, and every caller follows.

// IsUnsupported reports an error in err's chain that says the engine
// cannot do what was asked at all (ErrIdempotencyUnsupported,
// ErrMapUnsupported): the call fails on every attempt, and only an engine
// of another kind would serve it. The hub answers it with 108 (not
// available).
func IsUnsupported(err error) bool {
	return errors.Is(err, ErrIdempotencyUnsupported) || errors.Is(err, ErrMapUnsupported)
}

// IsTemporary reports an error in err's chain that says the engine
// refused the call, before acting on it, for a limit it holds now
// (ErrIdempotencyFull): the same call may succeed later. The hub answers
// it with 111 (too many requests, temporary). A driver's failure (a lost
// connection, a timeout) is not classified: the hub answers it with 100
// (internal), temporary as that code is.
func IsTemporary(err error) bool {
	return errors.Is(err, ErrIdempotencyFull)
}
