package access

import (
	"testing"
	"time"
)

// A Load of a scan that began before a change does not undo the change:
// neither a block (the scan missed it) nor an unblock (the scan still
// held the block).
func TestLoadKeepsNewerChanges(t *testing.T) {
	var s State
	scan := time.Now()
	s.Apply(Change{Kind: Block, User: "a"})
	s.Load(BucketBlocked, map[string]Stored{}, scan)
	if v := s.CheckConnection(Token{User: "a"}, time.Now()); v != Blocked {
		t.Fatalf("a block applied after the scan began was undone by it: %v", v)
	}
	s.Apply(Change{Kind: Unblock, User: "a"})
	s.Load(BucketBlocked, map[string]Stored{"a": {}}, scan)
	if v := s.CheckConnection(Token{User: "a"}, time.Now()); v != Allowed {
		t.Fatalf("an unblock applied after the scan began was undone by it: %v", v)
	}
	// A later scan is the truth.
	s.Load(BucketBlocked, map[string]Stored{"a": {}}, time.Now())
	if v := s.CheckConnection(Token{User: "a"}, time.Now()); v != Blocked {
		t.Fatalf("a newer scan holding the block: %v", v)
	}
}

func TestChecks(t *testing.T) {
	var s State
	now := time.Now()
	if s.CheckConnection(Token{User: "u", ID: "x", IssuedAt: 1}, now) != Allowed {
		t.Fatal("an empty state refuses")
	}
	s.Apply(Change{Kind: Revoke, ID: "x", ExpireAt: now.Add(-time.Second).Unix()})
	if s.CheckConnection(Token{ID: "x"}, now) != Allowed {
		t.Error("an expired revocation still refuses")
	}
	s.Apply(Change{Kind: Invalidate, User: "u", IssuedBefore: 100})
	s.Apply(Change{Kind: Invalidate, User: "u", IssuedBefore: 50})
	if s.CheckConnection(Token{User: "u", IssuedAt: 70}, now) != Invalidated {
		t.Error("a later, narrower invalidation made older tokens valid again")
	}
	if s.CheckConnection(Token{User: "u"}, now) != Allowed {
		t.Error("a token without iat is invalidated")
	}
	s.Apply(Change{Kind: Invalidate, User: "u", Channel: "ch", IssuedBefore: 100})
	if s.CheckSubscription(Token{User: "u", IssuedAt: 70}, "ch", now) != Invalidated {
		t.Error("an invalidated subscription token of the channel is accepted")
	}
	if s.CheckSubscription(Token{User: "u", IssuedAt: 70}, "other", now) != Allowed {
		t.Error("a channel's invalidation refuses another channel's token")
	}
	if invalidationKey("ab", "c") == invalidationKey("a", "bc") || invalidationKey("a", "") == invalidationKey("", "a") {
		t.Error("two user and channel pairs share a key")
	}
	s.Sweep(now)
	if s.Size() != 2 { // the invalidations; the expired revocation went
		t.Errorf("after sweep: %d records, want 2", s.Size())
	}
}
