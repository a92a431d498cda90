package grpcapi

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/heraldhq/herald/api"
)

// ErrorModeTransport answers a response's error as a gRPC status instead
// of inside the response (Config.ErrorMode, or per call the metadata
// "x-centrifugo-error-mode: transport"), as Centrifugo's transport error
// mode does.
const ErrorModeTransport = "transport"

// errorModeHeader asks for the transport error mode on one call.
const errorModeHeader = "x-centrifugo-error-mode"

// transportErrors turns the error of a response into a gRPC status in
// transport error mode: always when always is set, else when the call
// asks for it.
func transportErrors(always bool) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		resp, err := next(ctx, req)
		if err != nil {
			return resp, err
		}
		e := api.ResponseError(resp)
		if e == nil || !(always || askedForTransportErrors(ctx)) {
			return resp, nil
		}
		return nil, api.GRPCStatus(e).Err()
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
