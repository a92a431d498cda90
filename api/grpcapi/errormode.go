package grpcapi

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
	"github.com/heraldhq/herald/protocol"
)

// ErrorModeTransport answers a response's error as a gRPC status instead
// of inside the response (Config.ErrorMode, or per call the metadata
// "x-centrifugo-error-mode: transport"), as Centrifugo's transport error
// mode does.
const ErrorModeTransport = "transport"

// errorModeHeader asks for the transport error mode on one call.
const errorModeHeader = "x-centrifugo-error-mode"

// responseWithError is every response of api.proto that has an error
// field (all but BatchResponse, whose replies keep their own errors).
type responseWithError interface {
	GetError() *apiproto.Error
}

// transportErrors turns the error of a response into a gRPC status in
// transport error mode: always when always is set, else when the call
// asks for it.
func transportErrors(always bool) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		resp, err := next(ctx, req)
		if err != nil {
			return resp, err
		}
		r, ok := resp.(responseWithError)
		if !ok || r.GetError() == nil || !(always || askedForTransportErrors(ctx)) {
			return resp, nil
		}
		e := r.GetError()
		return nil, status.Error(grpcCode(e.GetCode()), e.GetMessage())
	}
}

func askedForTransportErrors(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get(errorModeHeader) {
		if strings.EqualFold(strings.TrimSpace(v), ErrorModeTransport) {
			return true
		}
	}
	return false
}

// grpcCode maps an error code to the status of the transport error mode,
// as Centrifugo's documentation lists it.
func grpcCode(code uint32) codes.Code {
	switch protocol.ErrorCode(code) {
	case protocol.ErrorUnknownChannel, protocol.ErrorMethodNotFound:
		return codes.NotFound
	case protocol.ErrorBadRequest, protocol.ErrorNotAvailable:
		return codes.InvalidArgument
	case protocol.ErrorUnrecoverablePosition:
		return codes.OutOfRange
	case protocol.ErrorConcurrentPagination:
		return codes.AlreadyExists
	}
	return codes.Internal
}
