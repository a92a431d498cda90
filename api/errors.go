package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// Error is an API error: the code and message of a reply's error object,
// {"code":N,"message":"…"}, over HTTP (a method's answer, a batch reply,
// a line of the single endpoint, a broadcast's channel), over gRPC (the
// response's Error message, or in transport error mode its status) and
// from an Executor. It is protocol.CodedError, the same type as a client
// command's hub.Error; its Temporary field says whether running the
// command again may succeed (100 internal, 111 too many requests).
// Test it with errors.As or the predicates below.
type Error = protocol.CodedError

// HTTPStatus is the status of e in the HTTP API's transport error mode,
// as Centrifugo's MapErrorToHTTPCode gives it.
func HTTPStatus(e *Error) int {
	status, _ := transportStatus(e.Code)
	return status
}

// GRPCCode is the status code of e in the gRPC API's transport error
// mode, as Centrifugo's documentation lists it.
func GRPCCode(e *Error) codes.Code {
	_, code := transportStatus(e.Code)
	return code
}

// transportStatus is how the transport error modes answer code: the HTTP
// status and the gRPC code, which group the codes alike.
func transportStatus(code protocol.ErrorCode) (int, codes.Code) {
	switch code {
	case protocol.ErrorUnknownChannel, protocol.ErrorMethodNotFound:
		return http.StatusNotFound, codes.NotFound
	case protocol.ErrorBadRequest, protocol.ErrorNotAvailable:
		return http.StatusBadRequest, codes.InvalidArgument
	case protocol.ErrorUnrecoverablePosition:
		return http.StatusRequestedRangeNotSatisfiable, codes.OutOfRange
	case protocol.ErrorConcurrentPagination:
		return http.StatusConflict, codes.AlreadyExists
	}
	return http.StatusInternalServerError, codes.Internal
}

// GRPCStatus is e as a gRPC status (the transport error mode).
func GRPCStatus(e *Error) *status.Status { return status.New(GRPCCode(e), e.Message) }

// ProtoError is e as api.proto's Error message; nil for nil.
func ProtoError(e *Error) *apiproto.Error {
	if e == nil {
		return nil
	}
	return &apiproto.Error{Code: uint32(e.Code), Message: e.Message}
}

// FromProto is the error of api.proto's Error message; nil for nil.
func FromProto(pe *apiproto.Error) *Error {
	if pe == nil {
		return nil
	}
	c := protocol.ErrorCode(pe.GetCode())
	return &Error{Code: c, Message: pe.GetMessage(), Temporary: c.Temporary()}
}

// ResponseError is the error of an api.proto response (every response
// but BatchResponse has one), or nil.
func ResponseError(resp any) *Error {
	if r, ok := resp.(interface{ GetError() *apiproto.Error }); ok {
		return FromProto(r.GetError())
	}
	return nil
}

// CodeOf is the code of the API error in err's chain, if there is one.
func CodeOf(err error) (protocol.ErrorCode, bool) { return protocol.CodeOf(err) }

func hasCode(err error, code protocol.ErrorCode) bool { return protocol.HasCode(err, code) }

// IsInternal reports an internal error (100) in err's chain.
func IsInternal(err error) bool { return hasCode(err, protocol.ErrorInternal) }

// IsUnknownChannel reports an unknown channel (102) in err's chain.
func IsUnknownChannel(err error) bool { return hasCode(err, protocol.ErrorUnknownChannel) }

// IsMethodNotFound reports an unknown method (104) in err's chain.
func IsMethodNotFound(err error) bool { return hasCode(err, protocol.ErrorMethodNotFound) }

// IsLimitExceeded reports a limit exceeded (106) in err's chain.
func IsLimitExceeded(err error) bool { return hasCode(err, protocol.ErrorLimitExceeded) }

// IsBadRequest reports a bad request (107) in err's chain.
func IsBadRequest(err error) bool { return hasCode(err, protocol.ErrorBadRequest) }

// IsNotAvailable reports a method or feature that is not available (108)
// in err's chain.
func IsNotAvailable(err error) bool { return hasCode(err, protocol.ErrorNotAvailable) }

func newError(code protocol.ErrorCode, format string, args ...any) *Error {
	return code.Codedf(format, args...)
}

func badRequest(format string, args ...any) *Error {
	return newError(protocol.ErrorBadRequest, format, args...)
}

func notAvailable(what string) *Error {
	return newError(protocol.ErrorNotAvailable, "not available: %s", what)
}

// unavailableError answers a method of the table Herald does not have.
func unavailableError(name string) *Error {
	return notAvailable(name + ": Herald does not have this method")
}

func internalError() *Error { return protocol.ErrorInternal.Coded() }

// fromHub turns an error of a hub call about ch into the reply's error.
// The hub's own errors keep their code; its generic messages are made to
// name the field or, for 108, the feature that is off. Anything else (an
// engine failure) is logged and answered with 100, so that internals
// never reach the caller.
func (a *handler) fromHub(ctx context.Context, method, ch, feature string, err error) *Error {
	var he *hub.Error
	if errors.As(err, &he) {
		switch he.Code {
		case protocol.ErrorUnknownChannel:
			return newError(protocol.ErrorUnknownChannel, "unknown channel: namespace %q is not configured", a.hub.ChannelSyntax().Namespace(ch))
		case protocol.ErrorBadRequest:
			if he.Message == protocol.ErrorBadRequest.Message() {
				return badRequest("channel: invalid name %q (too long, not ASCII, with a control character, or not matching the namespace's channel_regex)", ch)
			}
		case protocol.ErrorNotAvailable:
			if feature != "" {
				return notAvailable(fmt.Sprintf("%s is off in the namespace of channel %q", feature, ch))
			}
		}
		return he
	}
	a.logger(ctx).Error("api: hub call failed", "method", method, "channel", ch, "error", err)
	return internalError()
}

// decodeError explains why a body could not be decoded into a request. A
// body that is not JSON is a transport-level problem (plain 400, nil
// here); JSON with a value of the wrong type is a bad request naming the
// field.
func decodeError(err error) *Error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return nil
	}
	field := te.Field
	if field == "" {
		field = "request body"
	}
	return badRequest("%s: want %s, got %s", field, jsonKind(te.Type.String()), te.Value)
}

// jsonKind names a Go type as the JSON value it is decoded from.
func jsonKind(goType string) string {
	switch {
	case goType == "string":
		return "string"
	case goType == "bool":
		return "boolean"
	case strings.HasPrefix(goType, "[]"):
		return "array"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "api."), strings.HasPrefix(goType, "*api."):
		return "object"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "integer"
	}
	return goType
}

// IsTemporary reports an error in err's chain that running the command
// again may get past (see protocol.IsTemporary).
func IsTemporary(err error) bool { return protocol.IsTemporary(err) }
