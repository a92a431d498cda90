// Package unigrpc is the unidirectional gRPC transport, Centrifugo's
// uni_grpc: a client calls Consume of the service CentrifugoUniStream
// (unistream.proto, package unistream) with a connect request, and
// receives the connection's pushes as a stream of Push messages: the
// connect push first, then publications, joins, leaves, unsubscribes and
// empty pushes as pings, and a disconnect push before the server ends the
// stream. Clients generated from Centrifugo's unistream.proto work
// unchanged.
//
// The package serves one grpc.Server the caller owns (Server.Register), so
// that the server can listen where and with the TLS it is configured to.
package unigrpc
