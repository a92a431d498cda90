package hub

import (
	"fmt"

	"github.com/heraldhq/herald/protocol"
)

// Error is a client protocol error (codes 100–1999): the command fails and
// the connection stays open. Application handlers return it to answer a
// command with a specific code; codes 400–1999 are the application's own.
//
// Herald's errors are of three kinds. A failed command has a protocol
// code: this type, and api.Error for the server API, whose replies carry
// the same codes but no temporary flag (it derives Temporary from the
// code). A bad option is an OptionError, which names the field instead of
// a code. An engine's failure is a sentinel of package engine or a
// driver's error, classified by engine.IsUnsupported and
// engine.IsTemporary, by which the hub answers with a code.
type Error struct {
	Code      uint32
	Message   string
	Temporary bool
}

func (e *Error) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

func (e *Error) proto() *protocol.Error {
	return &protocol.Error{Code: e.Code, Message: e.Message, Temporary: e.Temporary}
}

func newError(c protocol.ErrorCode) *Error {
	return &Error{Code: uint32(c), Message: c.Message(), Temporary: c.Temporary()}
}

// Disconnect closes the connection with a close code (3000–4999) and a
// reason. Application handlers return it to close a connection; codes
// 4000–4499 ask the client to reconnect, 4500–4999 tell it not to.
type Disconnect struct {
	Code   uint32
	Reason string
}

func (d *Disconnect) Error() string { return fmt.Sprintf("disconnect %d: %s", d.Code, d.Reason) }

func newDisconnect(c protocol.DisconnectCode) *Disconnect {
	return &Disconnect{Code: uint32(c), Reason: c.Reason()}
}

// badRequest is 3501 with the reason the connection was refused, so that
// a developer sees in the client what the server logs ("bad request:
// connect without a token ..."). The code, which decides what clients do,
// stays the reference's; the reason is for people. It never carries what
// the client sent.
func badRequest(why string) *Disconnect {
	return &Disconnect{Code: uint32(protocol.DisconnectBadRequest), Reason: protocol.DisconnectBadRequest.Reason() + ": " + why}
}
