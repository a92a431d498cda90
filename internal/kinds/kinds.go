// Package kinds is the table behind a configuration item that names its
// type and has one section per type (a consumer's "postgresql" or
// "kafka", a channel state output's): each row says which section
// configures the type, how that section is checked and what it opens, so
// that a new type is one row and the checks and errors are the same for
// every table.
package kinds

import (
	"fmt"
	"strings"

	"github.com/heraldhq/herald/internal/optionerr"
)

// Kind is one type: its name in the configuration, the Go field of its
// section (for optionerr names), the section's check and its opener.
type Kind[T any] struct {
	Type     string
	Field    string
	Validate func() error
	Open     func() (T, error)
}

// Find returns the row of typ.
func Find[T any](table []Kind[T], typ string) (Kind[T], bool) {
	for _, k := range table {
		if k.Type == typ {
			return k, true
		}
	}
	return Kind[T]{}, false
}

// Validate checks the section of typ, its problems named below the
// section's field, or says that no row has typ.
func Validate[T any](table []Kind[T], typ string) error {
	if k, ok := Find(table, typ); ok {
		return optionerr.Prefix(k.Field, k.Validate())
	}
	return Unknown(table, typ)
}

// Open opens what the row of typ opens.
func Open[T any](table []Kind[T], typ string) (T, error) {
	if k, ok := Find(table, typ); ok {
		return k.Open()
	}
	var zero T
	return zero, Unknown(table, typ)
}

// Unknown is the error for a type no row has, on the field "Type",
// naming every type there is.
func Unknown[T any](table []Kind[T], typ string) error {
	names := make([]string, len(table))
	for i, k := range table {
		names[i] = fmt.Sprintf("%q", k.Type)
	}
	want := names[0]
	if n := len(names); n > 1 {
		want = strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	}
	return &optionerr.Error{Field: "Type", Message: fmt.Sprintf("%q: want %s", typ, want)}
}
