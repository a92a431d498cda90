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
// The key is checked when a call's headers arrive, before any of its
// message is read (gate.go), so that a client without it cannot make the
// server hold request bodies.
//
// # Limits
//
// As the HTTP API: a request message of at most 1 MiB by default, which
// must arrive within ReadTimeout, with at most 64 KiB of metadata. A
// connection carries at most MaxConcurrentStreams calls, a client address
// holds at most MaxConnectionsPerAddress connections (listener.go), idle
// connections are closed and silent ones pinged, and a connection whose
// client stops taking its responses is closed after SendTimeout
// (sendwatch.go).
package grpcapi
