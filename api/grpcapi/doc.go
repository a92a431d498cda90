// Package grpcapi is Herald's gRPC server API: Centrifugo's
// centrifugal.centrifugo.api.CentrifugoApi service (apiproto/api.proto),
// so that backends with clients generated from Centrifugo's api.proto
// publish, broadcast, read presence and history and disconnect users
// unchanged.
//
// Every method runs the HTTP API's method of the same name (package api):
// the same checks, limits, idempotency and error codes. Errors are
// answered inside the response's error field with gRPC status OK, as
// Centrifugo does; only a missing or wrong API key (Unauthenticated), a
// message over the size limit (ResourceExhausted) and a batch over
// max_batch_commands (InvalidArgument) are gRPC errors.
//
// # Authentication
//
// Callers send the key as the per-call metadata "authorization: apikey
// <KEY>", as Centrifugo's gRPC API expects (the scheme is
// case-insensitive). Keys are compared in constant time.
package grpcapi
