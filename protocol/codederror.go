package protocol

import (
	"errors"
	"fmt"
)

// CodedError is a failed command with a protocol error code: a client
// command's error reply (the connection stays open) and a server API
// call's error alike. It is the one coded error of Herald; package hub
// names it hub.Error and package api names it api.Error, and each
// transport turns it into its own shape (a Reply's Error, an HTTP API
// error object or status, a gRPC status) with a function of its own.
//
// A bad option is not a CodedError (it names a field, see optionerr), and
// an engine's failure is a sentinel or driver error classified by the
// engine package, which the hub and the API turn into code 100 or 108.
type CodedError struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
	// Temporary tells a client SDK to retry (connect, refresh). The
	// server API's JSON does not carry it (Centrifugo's has no such
	// field); callers of an Executor read it to decide on a retry.
	Temporary bool `json:"-"`
}

func (e *CodedError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

// Proto is the error as a Reply's Error; nil for nil.
func (e *CodedError) Proto() *Error {
	if e == nil {
		return nil
	}
	return &Error{Code: uint32(e.Code), Message: e.Message, Temporary: e.Temporary}
}

// Coded is c as a CodedError, with its message and temporary flag.
func (c ErrorCode) Coded() *CodedError {
	return &CodedError{Code: c, Message: c.Message(), Temporary: c.Temporary()}
}

// Codedf is a CodedError of c with a message of its own; the temporary
// flag is the code's.
func (c ErrorCode) Codedf(format string, args ...any) *CodedError {
	return &CodedError{Code: c, Message: fmt.Sprintf(format, args...), Temporary: c.Temporary()}
}

// CodeOf is the code of the CodedError in err's chain, if there is one.
func CodeOf(err error) (ErrorCode, bool) {
	var e *CodedError
	if errors.As(err, &e) {
		return e.Code, true
	}
	return 0, false
}

// HasCode reports whether err's chain holds a CodedError with code c.
func HasCode(err error, c ErrorCode) bool {
	got, ok := CodeOf(err)
	return ok && got == c
}

// IsTemporary reports whether err's chain holds a CodedError that a retry
// may get past: one marked Temporary, or of a code that is temporary by
// itself (100 internal, 111 too many requests, 113 concurrent
// pagination), so that an error built with only a code is judged as its
// code says.
func IsTemporary(err error) bool {
	var e *CodedError
	return errors.As(err, &e) && (e.Temporary || e.Code.Temporary())
}
