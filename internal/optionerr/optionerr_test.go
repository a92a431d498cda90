package optionerr

import (
	"errors"
	"fmt"
	"testing"
)

// TestAll finds every *Error in joined and wrapped errors, in order, and
// nothing in errors that hold none.
func TestAll(t *testing.T) {
	a := &Error{Field: "A", Message: "bad"}
	b := &Error{Field: "B.C", Message: "worse"}
	err := fmt.Errorf("pkg: %w", errors.Join(a, errors.New("other"), errors.Join(fmt.Errorf("wrapped: %w", b))))
	got := All(err)
	if len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("All: %v, want [%v %v]", got, a, b)
	}
	if got := All(errors.New("plain")); len(got) != 0 {
		t.Fatalf("All of a plain error: %v", got)
	}
	if got := All(nil); got != nil {
		t.Fatalf("All(nil): %v", got)
	}
	if s := b.Error(); s != "B.C: worse" {
		t.Fatalf("Error: %q", s)
	}
}

// TestPrefix puts every *Error of a joined error below a section, and
// keeps other errors and nil as they are.
func TestPrefix(t *testing.T) {
	other := errors.New("other")
	err := Prefix("Postgres", errors.Join(&Error{Field: "DSN", Message: "required"}, other, &Error{Field: "[2]", Message: "empty"}))
	got := All(err)
	if len(got) != 2 || got[0].Field != "Postgres.DSN" || got[1].Field != "Postgres[2]" || got[0].Message != "required" {
		t.Fatalf("Prefix: %v", got)
	}
	if !errors.Is(err, other) {
		t.Fatalf("Prefix lost the other error: %v", err)
	}
	if Prefix("X", nil) != nil {
		t.Fatal("Prefix(nil) is not nil")
	}
}
