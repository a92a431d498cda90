package protocol

import "strconv"

// ErrorCode is the code of an Error sent in a Reply. The values and messages
// are Centrifugo's, because SDKs decide on retries by code.
type ErrorCode uint32

// Client error codes. Apps may use 400–1999 for their own codes.
const (
	ErrorInternal              ErrorCode = 100
	ErrorUnauthorized          ErrorCode = 101
	ErrorUnknownChannel        ErrorCode = 102
	ErrorPermissionDenied      ErrorCode = 103
	ErrorMethodNotFound        ErrorCode = 104
	ErrorAlreadySubscribed     ErrorCode = 105
	ErrorLimitExceeded         ErrorCode = 106
	ErrorBadRequest            ErrorCode = 107
	ErrorNotAvailable          ErrorCode = 108
	ErrorTokenExpired          ErrorCode = 109
	ErrorExpired               ErrorCode = 110
	ErrorTooManyRequests       ErrorCode = 111
	ErrorUnrecoverablePosition ErrorCode = 112
	ErrorConcurrentPagination  ErrorCode = 113
)

// Message returns the message Centrifugo sends with the code, or "" for a
// code it does not define.
func (c ErrorCode) Message() string {
	switch c {
	case ErrorInternal:
		return "internal server error"
	case ErrorUnauthorized:
		return "unauthorized"
	case ErrorUnknownChannel:
		return "unknown channel"
	case ErrorPermissionDenied:
		return "permission denied"
	case ErrorMethodNotFound:
		return "method not found"
	case ErrorAlreadySubscribed:
		return "already subscribed"
	case ErrorLimitExceeded:
		return "limit exceeded"
	case ErrorBadRequest:
		return "bad request"
	case ErrorNotAvailable:
		return "not available"
	case ErrorTokenExpired:
		return "token expired"
	case ErrorExpired:
		return "expired"
	case ErrorTooManyRequests:
		return "too many requests"
	case ErrorUnrecoverablePosition:
		return "unrecoverable position"
	case ErrorConcurrentPagination:
		return "concurrent pagination"
	}
	return ""
}

// Temporary reports whether the error is sent with temporary=true, which
// makes SDKs retry connect and refresh instead of giving up.
func (c ErrorCode) Temporary() bool {
	return c == ErrorInternal || c == ErrorTooManyRequests || c == ErrorConcurrentPagination
}

// String returns the message, or the number for an unknown code.
func (c ErrorCode) String() string {
	if m := c.Message(); m != "" {
		return m
	}
	return "error " + strconv.FormatUint(uint64(c), 10)
}

// NewError returns the Error for a Reply with the code's message and
// temporary flag.
func NewError(c ErrorCode) *Error {
	return &Error{Code: uint32(c), Message: c.Message(), Temporary: c.Temporary()}
}

// DisconnectCode is a WebSocket close code (or the code of a disconnect
// push). SDKs decide whether to reconnect by its range, see Reconnect.
type DisconnectCode uint32

// Disconnect codes. 3000–3499 reconnect, 3500–3999 are terminal; apps use
// 4000–4499 (reconnect) and 4500–4999 (terminal).
const (
	// DisconnectConnectionClosed is an internal marker; it is never sent.
	DisconnectConnectionClosed  DisconnectCode = 3000
	DisconnectShutdown          DisconnectCode = 3001
	DisconnectServerError       DisconnectCode = 3004
	DisconnectExpired           DisconnectCode = 3005
	DisconnectSubExpired        DisconnectCode = 3006
	DisconnectSlow              DisconnectCode = 3008
	DisconnectWriteError        DisconnectCode = 3009
	DisconnectInsufficientState DisconnectCode = 3010
	DisconnectForceReconnect    DisconnectCode = 3011
	DisconnectNoPong            DisconnectCode = 3012
	DisconnectTooManyRequests   DisconnectCode = 3013
	// DisconnectStateInvalidated also makes the client drop its token.
	DisconnectStateInvalidated DisconnectCode = 3014

	DisconnectInvalidToken          DisconnectCode = 3500
	DisconnectBadRequest            DisconnectCode = 3501
	DisconnectStale                 DisconnectCode = 3502
	DisconnectForceNoReconnect      DisconnectCode = 3503
	DisconnectConnectionLimit       DisconnectCode = 3504
	DisconnectChannelLimit          DisconnectCode = 3505
	DisconnectInappropriateProtocol DisconnectCode = 3506
	DisconnectPermissionDenied      DisconnectCode = 3507
	DisconnectNotAvailable          DisconnectCode = 3508
	DisconnectTooManyErrors         DisconnectCode = 3509
)

// wsMessageTooBig is the WebSocket close code 1009; centrifuge-js treats it
// as terminal although it is below the protocol's ranges.
const wsMessageTooBig = 1009

// Reason returns the close reason Centrifugo sends with the code (all are
// well under the 123-byte limit of a close frame), or "" for a code it does
// not define.
func (c DisconnectCode) Reason() string {
	switch c {
	case DisconnectConnectionClosed:
		return "connection closed"
	case DisconnectShutdown:
		return "shutdown"
	case DisconnectServerError:
		return "internal server error"
	case DisconnectExpired:
		return "connection expired"
	case DisconnectSubExpired:
		return "subscription expired"
	case DisconnectSlow:
		return "slow"
	case DisconnectWriteError:
		return "write error"
	case DisconnectInsufficientState:
		return "insufficient state"
	case DisconnectForceReconnect:
		return "force reconnect"
	case DisconnectNoPong:
		return "no pong"
	case DisconnectTooManyRequests:
		return "too many requests"
	case DisconnectStateInvalidated:
		return "state invalidated"
	case DisconnectInvalidToken:
		return "invalid token"
	case DisconnectBadRequest:
		return "bad request"
	case DisconnectStale:
		return "stale"
	case DisconnectForceNoReconnect:
		return "force disconnect"
	case DisconnectConnectionLimit:
		return "connection limit"
	case DisconnectChannelLimit:
		return "channel limit"
	case DisconnectInappropriateProtocol:
		return "inappropriate protocol"
	case DisconnectPermissionDenied:
		return "permission denied"
	case DisconnectNotAvailable:
		return "not available"
	case DisconnectTooManyErrors:
		return "too many errors"
	}
	return ""
}

// Reconnect reports whether clients reconnect after this code: 3500–3999
// and 4500–4999 are terminal, so is 1009 (message too big); every other code,
// including the reserved ones from 5000 up, reconnects.
func (c DisconnectCode) Reconnect() bool {
	switch {
	case c == wsMessageTooBig:
		return false
	case c >= 3500 && c < 4000:
		return false
	case c >= 4500 && c < 5000:
		return false
	}
	return true
}

// String returns the reason, or the number for an unknown code.
func (c DisconnectCode) String() string {
	if r := c.Reason(); r != "" {
		return r
	}
	return "disconnect " + strconv.FormatUint(uint64(c), 10)
}

// Push returns the disconnect push for transports without close frames.
// The legacy reconnect field is left unset, as the reference server does:
// v2 clients decide by code.
func (c DisconnectCode) Push() *Disconnect {
	return &Disconnect{Code: uint32(c), Reason: c.Reason()}
}

// UnsubscribeCode is the code of an unsubscribe push.
type UnsubscribeCode uint32

// Unsubscribe codes: below 2500 the client stays unsubscribed, from 2500 up
// it resubscribes.
const (
	UnsubscribeServer            UnsubscribeCode = 2000
	UnsubscribeInsufficientState UnsubscribeCode = 2500
	UnsubscribeExpired           UnsubscribeCode = 2501
	// UnsubscribeStateInvalidated also makes the client drop its
	// subscription token and state.
	UnsubscribeStateInvalidated UnsubscribeCode = 2502
)

// Reason returns the reason sent with the code, or "" for an unknown code.
func (c UnsubscribeCode) Reason() string {
	switch c {
	case UnsubscribeServer:
		return "server unsubscribe"
	case UnsubscribeInsufficientState:
		return "insufficient state"
	case UnsubscribeExpired:
		return "subscription expired"
	case UnsubscribeStateInvalidated:
		return "state invalidated"
	}
	return ""
}

// Resubscribe reports whether the client resubscribes after this code.
func (c UnsubscribeCode) Resubscribe() bool {
	return c >= 2500
}

// String returns the reason, or the number for an unknown code.
func (c UnsubscribeCode) String() string {
	if r := c.Reason(); r != "" {
		return r
	}
	return "unsubscribe " + strconv.FormatUint(uint64(c), 10)
}

// Push returns the unsubscribe push body for the code.
func (c UnsubscribeCode) Push() *Unsubscribe {
	return &Unsubscribe{Code: uint32(c), Reason: c.Reason()}
}
