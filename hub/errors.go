package hub

import (
	"fmt"

	"github.com/heraldhq/herald/protocol"
)

// Error is a client protocol error (codes 100–1999): the command fails and
// the connection stays open. Application handlers return it to answer a
// command with a specific code; codes 400–1999 are the application's own.
// It is protocol.CodedError, the one coded error the server API returns
// too (api.Error).
type Error = protocol.CodedError

func newError(c protocol.ErrorCode) *Error { return c.Coded() }

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
