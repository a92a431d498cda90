package access

import (
	"testing"
	"time"
)

func TestUser(t *testing.T) {
	var s State
	now := time.Now()
	if u := s.User("u", now); u != (UserState{}) {
		t.Fatalf("empty state: %+v", u)
	}
	until := now.Add(time.Hour).Unix()
	s.Apply(Change{Kind: Block, User: "u", ExpireAt: until})
	s.Apply(Change{Kind: Invalidate, User: "u", IssuedBefore: 100})
	s.Apply(Change{Kind: Invalidate, User: "u", Channel: "ch", IssuedBefore: 200})
	want := UserState{Blocked: true, BlockedUntil: until, TokensIssuedBefore: 100}
	if u := s.User("u", now); u != want {
		t.Fatalf("got %+v, want %+v", u, want)
	}
	s.Apply(Change{Kind: Unblock, User: "u"})
	if u := s.User("u", now); u.Blocked {
		t.Fatalf("unblocked user still blocked: %+v", u)
	}
	if u := s.User("other", now); u != (UserState{}) {
		t.Fatalf("another user: %+v", u)
	}
}
