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

// keyAuth refuses calls whose metadata has no "authorization: apikey
// <key>" with the right key, with Unauthenticated, before the request is
// handled.
func keyAuth(key string) grpc.UnaryServerInterceptor {
	want := []byte(key)
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		for _, v := range md.Get("authorization") {
			scheme, got, ok := strings.Cut(strings.TrimSpace(v), " ")
			if ok && strings.EqualFold(scheme, "apikey") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) == 1 {
				return next(ctx, req)
			}
		}
		return nil, status.Error(codes.Unauthenticated, `missing or wrong API key: send the metadata "authorization: apikey <KEY>"`)
	}
}
