package kinds

import (
	"errors"
	"testing"

	"github.com/heraldhq/herald/internal/optionerr"
)

func TestTable(t *testing.T) {
	table := []Kind[string]{
		{Type: "a", Field: "A", Validate: func() error { return &optionerr.Error{Field: "URL", Message: "required"} }, Open: func() (string, error) { return "opened a", nil }},
		{Type: "b", Field: "B", Validate: func() error { return nil }, Open: func() (string, error) { return "opened b", nil }},
		{Type: "c", Field: "C", Validate: func() error { return nil }, Open: func() (string, error) { return "", errors.New("no") }},
	}
	var oe *optionerr.Error
	if err := Validate(table, "a"); !errors.As(err, &oe) || oe.Field != "A.URL" {
		t.Errorf("Validate(a) = %v, want the problem under A.URL", err)
	}
	if err := Validate(table, "b"); err != nil {
		t.Errorf("Validate(b) = %v", err)
	}
	if err := Validate(table, "z"); err == nil || err.Error() != `Type: "z": want "a", "b" or "c"` {
		t.Errorf("Validate(z) = %v", err)
	}
	if got, err := Open(table, "b"); got != "opened b" || err != nil {
		t.Errorf("Open(b) = %q, %v", got, err)
	}
	if _, err := Open(table, "z"); err == nil {
		t.Error("Open(z) opened something")
	}
	if err := Unknown(table[:1], "z"); err.Error() != `Type: "z": want "a"` {
		t.Errorf("Unknown with one row = %v", err)
	}
}
