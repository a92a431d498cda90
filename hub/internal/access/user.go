package access

import "time"

// UserState is what the state holds about one user, for the admin
// inspector: whether the user is blocked and whether the user's
// connection tokens issued before a time are invalid. (Revoked token ids
// are not kept by user, so they are not part of it.)
type UserState struct {
	Blocked bool `json:"blocked"`
	// BlockedUntil is when the block ends (Unix seconds); 0 for ever.
	BlockedUntil int64 `json:"blocked_until,omitempty"`
	// TokensIssuedBefore: connection tokens with an earlier iat (Unix
	// seconds) are invalid; 0 when none is.
	TokensIssuedBefore int64 `json:"tokens_issued_before,omitempty"`
	// InvalidationUntil is when that record may be forgotten; 0 never.
	InvalidationUntil int64 `json:"invalidation_until,omitempty"`
}

// User returns what the state holds about user at now.
func (s *State) User(user string, now time.Time) UserState {
	var u UserState
	if s.size.Load() == 0 {
		return u
	}
	sec := now.Unix()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.blocked[user]; ok && !e.removed && e.live(sec) {
		u.Blocked, u.BlockedUntil = true, e.expireAt
	}
	if e, ok := s.invalidated[invalidationKey(user, "")]; ok && e.live(sec) {
		u.TokensIssuedBefore, u.InvalidationUntil = e.before, e.expireAt
	}
	return u
}
