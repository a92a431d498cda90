// Package optionerr is the error a package returns for one bad field of
// the configuration it was given (hub.OptionError is this type), so that
// a configuration layer (package config) can say which key of its own
// format was wrong, whichever package checked it. It is the one error type
// for options: a bad option needs its field named, not a protocol code,
// so it is not the coded error of commands and API calls (hub.Error,
// api.Error).
package optionerr

import (
	"errors"
	"fmt"
)

// Error is a problem with one option of a configuration. Field is the
// option's Go path from the struct validated, such as
// "Namespaces[2].HistorySize"; Message says what is wrong, naming values
// and Go fields, never a file format's keys: a configuration layer
// translates Field, and the field names in Message, to the keys its users
// wrote.
type Error struct {
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Field + ": " + e.Message }

// All returns every *Error in err, which may join several, also below a
// wrapping error (fmt.Errorf("pkg: %w", errors.Join(...))).
func All(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *Error:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, e := range e.Unwrap() {
				walk(e)
			}
		default:
			walk(errors.Unwrap(err))
		}
	}
	walk(err)
	return out
}

// Prefix returns err with the Field of each *Error in it put below
// prefix ("DSN" below "Postgres" is "Postgres.DSN"), for a type that
// validates a section of its own; other errors are kept as they are. Nil
// stays nil.
func Prefix(prefix string, err error) error {
	switch e := err.(type) {
	case nil:
		return nil
	case *Error:
		return &Error{Field: joinField(prefix, e.Field), Message: e.Message}
	case interface{ Unwrap() []error }:
		var errs []error
		for _, e := range e.Unwrap() {
			errs = append(errs, Prefix(prefix, e))
		}
		return errors.Join(errs...)
	}
	return err
}

func joinField(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "" || field[0] == '[':
		return prefix + field
	}
	return prefix + "." + field
}

// List gathers the problems of one Validate: Add one per bad field, and
// return Err.
type List []error

// Add records a problem with field, its message formatted as fmt.Sprintf.
func (l *List) Add(field, format string, args ...any) {
	*l = append(*l, &Error{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Err joins the problems (and any other error appended); nil when there
// are none.
func (l List) Err() error { return errors.Join(l...) }
