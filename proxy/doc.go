// Package proxy calls the application's backend over HTTP or gRPC to
// decide client events, as Centrifugo's proxy does: connect
// (authentication without a JWT), refresh, subscribe, publish,
// sub_refresh and rpc. Requests and responses are Centrifugo's JSON shapes
// over HTTP, and its proxy.proto (package proxyproto) over gRPC, so a
// backend written for Centrifugo's proxy works unchanged; docs/proxy.md
// describes them. Both kinds of endpoint share the events, the limits and
// the handling of answers and failures (call.go); only the round trip
// differs (call.go for HTTP, grpc.go for gRPC).
//
// A Router holds the named endpoints and which of them each event (and
// each channel or RPC namespace) uses; Router.Handlers are its
// hub.Handlers, for hub.Chain. Where no proxy is configured the handlers
// return hub.ErrUseDefault, so the next handlers in the chain, then the
// hub, decide as without a proxy (tokens, namespace permissions).
//
// Calls run on the calling client's command goroutine, bounded by the
// endpoint's timeout and the command's context, so a slow backend holds up
// only the clients waiting for it. A node-wide limit on calls in flight
// answers excess calls at once with error 111 (too many requests,
// temporary) instead of queueing them.
package proxy
