package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// apiError is the error object of a reply: {"code":N,"message":"…"}.
type apiError struct {
	Code    uint32 `json:"code"`
	Message string `json:"message"`
}

func newError(code protocol.ErrorCode, format string, args ...any) *apiError {
	return &apiError{Code: uint32(code), Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiError {
	return newError(protocol.ErrorBadRequest, format, args...)
}

func notAvailable(what string) *apiError {
	return newError(protocol.ErrorNotAvailable, "not available: %s", what)
}

// unavailableError answers a method of the table Herald does not have.
func unavailableError(name string) *apiError {
	return notAvailable(name + ": Herald does not have this method")
}

func internalError() *apiError {
	return &apiError{Code: uint32(protocol.ErrorInternal), Message: protocol.ErrorInternal.Message()}
}

// httpStatus maps an error code to the status of the transport error mode,
// as Centrifugo's MapErrorToHTTPCode does.
func httpStatus(code uint32) int {
	switch protocol.ErrorCode(code) {
	case protocol.ErrorUnknownChannel, protocol.ErrorMethodNotFound:
		return http.StatusNotFound
	case protocol.ErrorBadRequest, protocol.ErrorNotAvailable:
		return http.StatusBadRequest
	case protocol.ErrorUnrecoverablePosition:
		return http.StatusRequestedRangeNotSatisfiable
	case protocol.ErrorConcurrentPagination:
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// fromHub turns an error of a hub call about ch into the reply's error.
// The hub's own errors keep their code; its generic messages are made to
// name the field or, for 108, the feature that is off. Anything else (an
// engine failure) is logged and answered with 100, so that internals
// never reach the caller.
func (a *handler) fromHub(ctx context.Context, method, ch, feature string, err error) *apiError {
	var he *hub.Error
	if errors.As(err, &he) {
		switch protocol.ErrorCode(he.Code) {
		case protocol.ErrorUnknownChannel:
			return newError(protocol.ErrorUnknownChannel, "unknown channel: namespace %q is not configured", namespaceOf(ch))
		case protocol.ErrorBadRequest:
			if he.Message == protocol.ErrorBadRequest.Message() {
				return badRequest("channel: invalid name %q (too long, not ASCII, with a control character, or not matching the namespace's channel_regex)", ch)
			}
		case protocol.ErrorNotAvailable:
			if feature != "" {
				return notAvailable(fmt.Sprintf("%s is off in the namespace of channel %q", feature, ch))
			}
		}
		return &apiError{Code: he.Code, Message: he.Message}
	}
	a.logger(ctx).Error("api: hub call failed", "method", method, "channel", ch, "error", err)
	return internalError()
}

// namespaceOf returns the namespace part of a channel name, as the hub
// resolves it.
func namespaceOf(ch string) string {
	ns, _, _ := strings.Cut(strings.TrimPrefix(ch, "$"), ":")
	return ns
}

// decodeError explains why a body could not be decoded into a request. A
// body that is not JSON is a transport-level problem (plain 400, nil
// here); JSON with a value of the wrong type is a bad request naming the
// field.
func decodeError(err error) *apiError {
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
