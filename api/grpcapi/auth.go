package grpcapi

import (
	"context"
	"crypto/subtle"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// errUnauthenticated answers a call without the right key.
var errUnauthenticated = status.Error(codes.Unauthenticated, `missing or wrong API key: send the metadata "authorization: apikey <KEY>"`)

// keyAuth refuses unary calls whose metadata has no "authorization:
// apikey <key>" with the right key, with Unauthenticated, before the
// request is handled.
func keyAuth(key string) grpc.UnaryServerInterceptor {
	want := []byte(key)
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if !hasKey(ctx, want) {
			return nil, errUnauthenticated
		}
		return next(ctx, req)
	}
}

// keyAuthStream is keyAuth for streaming calls (the reflection service).
func keyAuthStream(key string) grpc.StreamServerInterceptor {
	want := []byte(key)
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) error {
		if !hasKey(ss.Context(), want) {
			return errUnauthenticated
		}
		return next(srv, ss)
	}
}

// hasKey reports whether the call's metadata carries the key, compared in
// constant time; the scheme is case-insensitive.
func hasKey(ctx context.Context, want []byte) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	return mdHasKey(md, want)
}

// mdHasKey is hasKey on the call's metadata.
func mdHasKey(md metadata.MD, want []byte) bool {
	for _, v := range md.Get("authorization") {
		scheme, got, ok := strings.Cut(strings.TrimSpace(v), " ")
		if ok && strings.EqualFold(scheme, "apikey") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) == 1 {
			return true
		}
	}
	return false
}
