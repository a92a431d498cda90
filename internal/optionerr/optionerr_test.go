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
